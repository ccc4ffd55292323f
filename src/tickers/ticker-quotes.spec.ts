import type { AggregatedPrice } from '../aggregation/aggregate.js';
import type { PriceSnapshot } from '../aggregation/price-snapshot.js';
import { TickerQuotes } from './ticker-quotes.service.js';

const AS_OF = Date.parse('2026-11-20T12:00:00.000Z');

/** The oldest input behind each price of `snapshot()`: ETH's venue b lagged 40 s. */
const OLDEST = { BTC: AS_OF - 2_000, ETH: AS_OF - 40_300 } as const;

function aggregated(symbol: keyof typeof OLDEST, price: number, sources: string[], spread: number) {
  const oldestInputAt = OLDEST[symbol];
  return { symbol, price, sources, observedAt: AS_OF - 100, oldestInputAt, spread };
}

function snapshot(): PriceSnapshot {
  return {
    asOf: AS_OF,
    prices: new Map<string, AggregatedPrice>([
      ['BTC', aggregated('BTC', 91260.274, ['a', 'b', 'c'], 0.0012)],
      ['ETH', aggregated('ETH', 3012.456, ['a', 'b'], 0.00049)],
    ]),
  };
}

function quotes(of: PriceSnapshot, prices: Record<string, number>): TickerQuotes {
  return new TickerQuotes(new Date(of.asOf).toISOString(), prices, of);
}

describe('TickerQuotes.attestedClaims', () => {
  it('claims the body order, with venues and spread from the snapshot', () => {
    expect(quotes(snapshot(), { ETH: 3012.46, BTC: 91260.27 }).attestedClaims()).toEqual({
      currency: 'USD',
      timestamp: OLDEST.ETH,
      values: [
        { symbol: 'ETH', value: 3012.46, venues: 2, spread: 0.00049 },
        { symbol: 'BTC', value: 91260.27, venues: 3, spread: 0.0012 },
      ],
    });
  });

  it("claims as its time the oldest input behind the answer's prices, not the snapshot's", () => {
    const current = snapshot();
    expect(quotes(current, { BTC: 91260.27 }).attestedClaims().timestamp).toBe(OLDEST.BTC);
    expect(quotes(current, { BTC: 91260.27, ETH: 3012.46 }).attestedClaims().timestamp).toBe(
      OLDEST.ETH,
    );
  });

  it('never claims a time later than the snapshot', () => {
    const late: PriceSnapshot = {
      asOf: AS_OF,
      prices: new Map([['BTC', { ...aggregated('BTC', 1, ['a'], 0), oldestInputAt: AS_OF + 5 }]]),
    };
    expect(quotes(late, { BTC: 1 }).attestedClaims().timestamp).toBe(AS_OF);
  });

  it('refuses to claim a price whose oldest input has no time', () => {
    const unknown = { ...aggregated('BTC', 1, ['a'], 0), oldestInputAt: undefined };
    const current = {
      asOf: AS_OF,
      prices: new Map([['BTC', unknown as unknown as AggregatedPrice]]),
    };
    expect(() => quotes(current, { BTC: 1 }).attestedClaims()).toThrow(
      'BTC has no time for its oldest input',
    );
  });
});
