import 'reflect-metadata';
import { GUARDS_METADATA } from '@nestjs/common/constants.js';
import type { FastifyRequest } from 'fastify';
import type { PriceSnapshot } from '../aggregation/price-snapshot.js';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { resolverGuard } from '../paid-answers/index.js';
import {
  TickerQuotes,
  type TickerQuotesService,
  type TickerSelection,
} from '../tickers/ticker-quotes.service.js';
import { MarketStatsController } from './market-stats.controller.js';
import { MarketStatsResolver } from './market-stats.resolver.js';
import type { MarketStatsService, SymbolStatistics } from './market-stats.service.js';

const AS_OF = Date.parse('2026-11-20T12:00:00.000Z');
const SNAPSHOT: PriceSnapshot = {
  asOf: AS_OF,
  prices: new Map([
    [
      'BTC',
      {
        symbol: 'BTC',
        price: 91260.274,
        sources: ['a', 'b'],
        observedAt: AS_OF,
        // the time of the price's oldest input, where the aggregation records one
        oldestInputAt: AS_OF - 5000,
        spread: 0.0012,
      },
    ],
  ]),
};
const STATISTICS: SymbolStatistics = {
  open24h: 92986.2049,
  high24h: 94492.5,
  low24h: 89881.4,
  volume24h: 75212.123456789,
  volumeUsd24h: 6884551217.4712,
  venues: 7,
  marketCapUsd: 1822394762748.4,
};

class Quotes {
  readonly asked: TickerSelection[] = [];
  quote(selection: TickerSelection): Promise<TickerQuotes> {
    this.asked.push(selection);
    return Promise.resolve(
      new TickerQuotes(new Date(AS_OF).toISOString(), { BTC: 91260.27 }, SNAPSHOT),
    );
  }
}

function resolverWith(gathered: boolean): { resolver: MarketStatsResolver; quotes: Quotes } {
  const quotes = new Quotes();
  const statistics = {
    gathered: () => gathered,
    statisticsOf: () => STATISTICS,
  } as unknown as MarketStatsService;
  const resolver = new MarketStatsResolver(quotes as unknown as TickerQuotesService, statistics, {
    refreshMs: 30_000,
    staleMs: 300_000,
  });
  return { resolver, quotes };
}

const request = (symbols: string) => ({ params: { symbols } }) as unknown as FastifyRequest;

describe('MarketStatsResolver', () => {
  it('refuses a malformed list before any price is looked up', async () => {
    const { resolver, quotes } = resolverWith(true);
    await expect(resolver.resolve(request('BTC,,ETH'))).rejects.toMatchObject({
      code: ErrorCode.InvalidSymbolList,
    });
    expect(quotes.asked).toEqual([]);
  });

  it('answers 503 with Retry-After while no venue has given statistics', async () => {
    const refused = resolverWith(false).resolver.resolve(request('btc'));
    await expect(refused).rejects.toThrow(ApiError);
    await expect(refused).rejects.toMatchObject({
      code: ErrorCode.PriceUnavailable,
      status: 503,
      headers: { 'retry-after': '30' },
    });
  });

  it("answers the tickers' price with the figures, and signs what a ticker answer signs", async () => {
    const { resolver, quotes } = resolverWith(true);
    const answer = await resolver.resolve(request('btc'));
    expect(quotes.asked).toEqual([{ kind: 'many', symbols: ['BTC'] }]);
    expect(answer.body).toEqual({
      timestamp: '2026-11-20T12:00:00.000Z',
      currency: 'USD',
      markets: {
        BTC: {
          price: 91260.27,
          open24h: 92986.2,
          high24h: 94492.5,
          low24h: 89881.4,
          change24h: -1725.93,
          changePct24h: -1.86,
          volume24h: 75212.12345679,
          volumeUsd24h: 6884551217.47,
          venues: 7,
          spreadBps: 12,
          marketCapUsd: 1822394762748,
        },
      },
    });
    const ticker = await new Quotes().quote({ kind: 'many', symbols: ['BTC'] });
    expect(answer.attestedClaims()).toEqual(ticker.attestedClaims());
  });

  it('runs before the payment guard', () => {
    const guards = Reflect.getMetadata(
      GUARDS_METADATA,
      MarketStatsController.prototype.getMarkets,
    ) as { name: string }[];
    expect(guards[1]).toBe(resolverGuard(MarketStatsResolver));
    expect(guards.map((guard) => guard.name)).toEqual([
      'PresentedPaymentGuard',
      'MarketStatsResolverGuard',
      'PaymentGuard',
    ]);
  });
});
