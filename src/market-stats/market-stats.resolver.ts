import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from '../common/api-error.js';
import type { AnswerResolver } from '../paid-answers/index.js';
import { TickerQuotesService } from '../tickers/ticker-quotes.service.js';
import { MarketStatsAnswer } from './market-stats-answer.js';
import { MARKET_STATS_SETTINGS, type MarketStatsSettings } from './market-stats.settings.js';
import { MarketStatsService, type SymbolStatistics } from './market-stats.service.js';
import { parseMarketSymbols } from './market-symbols.js';
import { Inject } from '@nestjs/common';

/**
 * `/v1/markets/:symbols`, before any payment: the list (400), the catalogue (404), a fresh
 * price for every symbol (503, as the tickers) and statistics read from some venue (503).
 */
@Injectable()
export class MarketStatsResolver implements AnswerResolver<MarketStatsAnswer> {
  constructor(
    private readonly quotes: TickerQuotesService,
    private readonly statistics: MarketStatsService,
    @Inject(MARKET_STATS_SETTINGS.token) private readonly settings: MarketStatsSettings,
  ) {}

  async resolve(request: FastifyRequest): Promise<MarketStatsAnswer> {
    const { symbols: raw = '' } = request.params as { symbols?: string };
    const symbols = parseMarketSymbols(raw);
    const quotes = await this.quotes.quote({ kind: 'many', symbols });
    if (!this.statistics.gathered()) {
      const retryAfter = Math.max(1, Math.ceil(this.settings.refreshMs / 1000));
      throw new ApiError(
        ErrorCode.PriceUnavailable,
        'No 24-hour statistics have been read from any venue yet.',
        { 'retry-after': String(retryAfter) },
      );
    }
    const statistics = new Map<string, SymbolStatistics>();
    for (const symbol of symbols) {
      const aggregated = quotes.snapshot.prices.get(symbol);
      if (aggregated === undefined) throw new Error(`${symbol} was quoted without a price`);
      statistics.set(
        symbol,
        this.statistics.statisticsOf(symbol, aggregated.price, quotes.snapshot),
      );
    }
    return new MarketStatsAnswer(quotes, statistics);
  }
}
