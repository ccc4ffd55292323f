import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AssetCatalogue } from '../assets/asset-catalogue.js';
import { MARKETS_SETTINGS, type MarketsSettings } from '../markets/markets.settings.js';
import { ApiError, ErrorCode } from '../common/api-error.js';
import type { AnswerResolver } from '../paid-answers/index.js';
import { INTERVALS, candleStart } from './candle.js';
import { OhlcAnswer, PriceAtAnswer } from './history-answers.js';
import { HistoryCandles } from './history-candles.service.js';
import { parseOhlcQuery, parsePriceAtQuery, parseSymbol } from './history-request.js';

/** The symbol of the route, checked (400) and known (404). */
function symbolOf(request: FastifyRequest, catalogue: AssetCatalogue): string {
  const symbol = parseSymbol((request.params as { symbol?: string }).symbol);
  if (!catalogue.has(symbol)) {
    throw new ApiError(
      ErrorCode.UnknownSymbol,
      `${symbol} is not supported; GET /v1/assets lists the supported symbols.`,
    );
  }
  return symbol;
}

function query(request: FastifyRequest): Record<string, unknown> {
  return (request.query ?? {}) as Record<string, unknown>;
}

/**
 * `getOhlc` before any 402: the symbol, interval and range checked (400, 404), the candles
 * fetched or read from those kept (503 when no venue answers), so an unanswerable request is
 * never offered; the candles resolved are the ones the handler serves.
 */
@Injectable()
export class OhlcResolver implements AnswerResolver<OhlcAnswer> {
  constructor(
    private readonly catalogue: AssetCatalogue,
    private readonly history: HistoryCandles,
  ) {}

  async resolve(request: FastifyRequest): Promise<OhlcAnswer> {
    const symbol = symbolOf(request, this.catalogue);
    const now = Date.now();
    const asked = parseOhlcQuery(symbol, query(request), now);
    const { candles } = await this.history.candles(asked, now, request.ip);
    if (candles.length === 0) {
      throw new ApiError(
        ErrorCode.BadRequest,
        `No venue has ${symbol} ${asked.interval} candles from ${new Date(asked.from).toISOString()} to ${new Date(asked.to).toISOString()}.`,
      );
    }
    return new OhlcAnswer(symbol, asked.interval, asked, candles, now);
  }
}

/** A price-at request's venue rounds, one per interval tried, end within this many venue time-outs. */
export const PRICE_AT_DEADLINE_TIMEOUTS = 2;

/**
 * `getPriceAt` before any 402: the symbol and `t` checked (400, 404), then the candle containing
 * `t` at the finest interval any venue still has (1m first), 503 when no venue answers. A
 * further interval is tried only within PRICE_AT_DEADLINE_TIMEOUTS × MARKET_TIMEOUT_MS of the
 * start: slow venues make a 503 (what was learnt is kept for the retry), never a request that
 * hangs for one time-out per interval.
 */
@Injectable()
export class PriceAtResolver implements AnswerResolver<PriceAtAnswer> {
  constructor(
    private readonly catalogue: AssetCatalogue,
    private readonly history: HistoryCandles,
    @Inject(MARKETS_SETTINGS.token) private readonly markets: Pick<MarketsSettings, 'timeoutMs'>,
  ) {}

  async resolve(request: FastifyRequest): Promise<PriceAtAnswer> {
    const symbol = symbolOf(request, this.catalogue);
    const now = Date.now();
    const t = parsePriceAtQuery(query(request), now);
    const deadline = now + PRICE_AT_DEADLINE_TIMEOUTS * this.markets.timeoutMs;
    for (const interval of INTERVALS) {
      if (interval !== INTERVALS[0] && Date.now() > deadline) {
        throw new ApiError(
          ErrorCode.PriceUnavailable,
          `The venues took too long to find ${symbol} history at ${new Date(t).toISOString()}; retry.`,
          { 'retry-after': '1' },
        );
      }
      const start = candleStart(t, interval);
      const { candles } = await this.history.candles(
        { symbol, interval, from: start, to: start },
        now,
        request.ip,
      );
      const candle = candles[0];
      if (candle !== undefined) return new PriceAtAnswer(symbol, t, interval, candle);
    }
    throw new ApiError(
      ErrorCode.BadRequest,
      `No venue has ${symbol} history reaching ${new Date(t).toISOString()}.`,
    );
  }
}
