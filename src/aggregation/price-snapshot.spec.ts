import type { AggregatedPrice, SymbolOutcome } from './aggregate.js';
import { isFresh, nextSnapshot, type PriceSnapshot } from './price-snapshot.js';

const STALE_MS = 60_000;
const T0 = 1_795_176_000_000;

function priced(symbol: string, price: number, observedAt: number): SymbolOutcome {
  return {
    status: 'priced',
    price: { symbol, price, sources: ['a', 'b'], observedAt, oldestInputAt: observedAt, spread: 0 },
    rejected: [],
  };
}

const unpriced: SymbolOutcome = { status: 'unpriced', reason: 'no_agreement', venues: ['a', 'b'] };

describe('nextSnapshot', () => {
  it('takes every price the round produced and stamps the round time', () => {
    const snapshot = nextSnapshot(
      undefined,
      new Map([['BTC', priced('BTC', 100, T0 - 10)]]),
      T0,
      STALE_MS,
    );
    expect(snapshot.asOf).toBe(T0);
    expect(snapshot.prices.get('BTC')?.price).toBe(100);
  });

  it('replaces a previous price with the new round', () => {
    const previous = nextSnapshot(
      undefined,
      new Map([['BTC', priced('BTC', 100, T0)]]),
      T0,
      STALE_MS,
    );
    const next = nextSnapshot(
      previous,
      new Map([['BTC', priced('BTC', 105, T0 + 5000)]]),
      T0 + 5000,
      STALE_MS,
    );
    expect(next.prices.get('BTC')?.price).toBe(105);
  });

  it('keeps the last good price while it is fresh, then drops it', () => {
    let snapshot: PriceSnapshot = nextSnapshot(
      undefined,
      new Map([['BTC', priced('BTC', 100, T0)]]),
      T0,
      STALE_MS,
    );
    snapshot = nextSnapshot(snapshot, new Map([['BTC', unpriced]]), T0 + STALE_MS, STALE_MS);
    expect(snapshot.prices.get('BTC')?.price).toBe(100);
    snapshot = nextSnapshot(snapshot, new Map(), T0 + STALE_MS + 1, STALE_MS);
    expect(snapshot.prices.has('BTC')).toBe(false);
  });
});

describe('isFresh', () => {
  const price: AggregatedPrice = {
    symbol: 'BTC',
    price: 1,
    sources: ['a'],
    observedAt: T0,
    oldestInputAt: T0,
    spread: 0,
  };
  it('is fresh up to and including the staleness limit', () => {
    expect(isFresh(price, T0 + STALE_MS, STALE_MS)).toBe(true);
    expect(isFresh(price, T0 + STALE_MS + 1, STALE_MS)).toBe(false);
  });
});
