import 'reflect-metadata';
import { GUARDS_METADATA, INTERCEPTORS_METADATA } from '@nestjs/common/constants.js';
import type { FastifyRequest } from 'fastify';
import type { AggregatedPrice } from '../aggregation/aggregate.js';
import type { PriceSnapshot } from '../aggregation/price-snapshot.js';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { resolverGuard } from '../paid-answers/index.js';
import {
  TickerQuotes,
  type TickerQuotesService,
  type TickerSelection,
} from './ticker-quotes.service.js';
import { AllTickersResolver, TickerListResolver, TickerResolver } from './ticker-resolvers.js';
import { TickersController } from './tickers.controller.js';

const AS_OF = Date.parse('2026-11-20T12:00:00.000Z');

function aggregated(symbol: string, price: number, sources: string[], spread: number) {
  return {
    symbol,
    price,
    sources,
    observedAt: AS_OF,
    oldestInputAt: AS_OF,
    spread,
  } satisfies AggregatedPrice;
}

const SNAPSHOT: PriceSnapshot = {
  asOf: AS_OF,
  prices: new Map([
    ['BTC', aggregated('BTC', 91260.274, ['a', 'b', 'c'], 0.0012)],
    ['ETH', aggregated('ETH', 3012.456, ['a', 'b'], 0.00049)],
  ]),
};

/** Answers every selection from SNAPSHOT and records what it was asked. */
class RecordingQuotes {
  readonly asked: TickerSelection[] = [];

  quote(selection: TickerSelection): Promise<TickerQuotes> {
    this.asked.push(selection);
    return Promise.resolve(new TickerQuotes(new Date(AS_OF).toISOString(), {}, SNAPSHOT));
  }
}

function request(params: Record<string, string>): FastifyRequest {
  return { params } as unknown as FastifyRequest;
}

describe('the ticker resolvers', () => {
  it('ask for the selection their route makes, parsed from its path', async () => {
    const quotes = new RecordingQuotes();
    const service = quotes as unknown as TickerQuotesService;
    await new TickerResolver(service).resolve(request({ symbol: 'btc' }));
    await new TickerListResolver(service).resolve(request({ symbols: 'eth,BTC' }));
    await new AllTickersResolver(service).resolve(request({}));
    expect(quotes.asked).toEqual([
      { kind: 'one', symbol: 'BTC' },
      { kind: 'many', symbols: ['ETH', 'BTC'] },
      { kind: 'all' },
    ]);
  });

  it('refuse malformed symbols before any quote is looked up', async () => {
    const quotes = new RecordingQuotes();
    const service = quotes as unknown as TickerQuotesService;
    const refused = new TickerListResolver(service).resolve(request({ symbols: 'BTC' }));
    await expect(refused).rejects.toThrow(ApiError);
    await expect(refused).rejects.toMatchObject({ code: ErrorCode.InvalidSymbolList });
    expect(quotes.asked).toEqual([]);
  });

  it.each([
    ['getTicker', TickerResolver],
    ['getTickers', TickerListResolver],
    ['getAllTickers', AllTickersResolver],
  ] as const)('%s runs its resolver before the payment guard and is attested', (name, resolver) => {
    const method = (TickersController.prototype as unknown as Record<string, object>)[name];
    const guards = Reflect.getMetadata(GUARDS_METADATA, method as object) as { name: string }[];
    expect(guards[1]).toBe(resolverGuard(resolver));
    expect(guards.map((guard) => guard.name)).toEqual([
      'PresentedPaymentGuard',
      `${resolver.name}Guard`,
      'PaymentGuard',
    ]);
    const interceptors = Reflect.getMetadata(INTERCEPTORS_METADATA, method as object) as {
      name: string;
    }[];
    expect(interceptors.map((interceptor) => interceptor.name)).toEqual(
      expect.arrayContaining(['PriceAttestationInterceptor', 'SettlementInterceptor']),
    );
    expect(Reflect.getMetadata(GUARDS_METADATA, TickersController)).toBeUndefined();
  });
});

describe('TickerQuotes', () => {
  it('claims its prices in body order, with venues and spread from the snapshot', () => {
    const quotes = new TickerQuotes(
      new Date(AS_OF).toISOString(),
      { ETH: 3012.46, BTC: 91260.27 },
      SNAPSHOT,
    );
    expect(quotes.attestedClaims()).toEqual({
      currency: 'USD',
      timestamp: AS_OF,
      values: [
        { symbol: 'ETH', value: 3012.46, venues: 2, spread: 0.00049 },
        { symbol: 'BTC', value: 91260.27, venues: 3, spread: 0.0012 },
      ],
    });
    expect(quotes.claimsKey).toEqual({ source: SNAPSHOT, key: 'ETH,BTC' });
  });

  it('refuses to claim a price its snapshot does not hold', () => {
    const quotes = new TickerQuotes(new Date(AS_OF).toISOString(), { SOL: 142.37 }, SNAPSHOT);
    expect(() => quotes.attestedClaims()).toThrow('SOL is not in the snapshot');
  });
});
