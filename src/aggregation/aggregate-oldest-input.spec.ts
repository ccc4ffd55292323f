import type { RawQuote } from '../markets/price-source.js';
import { aggregate, type PricingPolicy } from './aggregate.js';

const NOW = 1_795_176_000_000;
const POLICY: PricingPolicy = {
  staleMs: 60_000,
  minSources: 2,
  maxDeviation: 0.02,
  outlierFloor: 0.005,
  madMultiplier: 5,
  volumeWeighted: false,
};

function quote(source: string, price: number, overrides: Partial<RawQuote> = {}): RawQuote {
  return { source, symbol: 'BTC', quote: 'USD', price, observedAt: NOW - 1000, ...overrides };
}

describe("aggregate: a price's oldest input (what an attestation signs as its time)", () => {
  it('keeps the oldest contributing input as the time no part of the price is older than', () => {
    const outcome = aggregate(
      [
        quote('a', 100, { observedAt: NOW - 5000 }),
        quote('b', 100, { observedAt: NOW - 2000 }),
        // a second listing on venue b, older, in its vote too
        quote('b', 100, { observedAt: NOW - 9000 }),
        // an outlier is no input of the price
        quote('c', 500, { observedAt: NOW - 30_000 }),
      ],
      POLICY,
      NOW,
    ).outcomes.get('BTC');
    expect(outcome).toMatchObject({
      status: 'priced',
      price: { observedAt: NOW - 2000, oldestInputAt: NOW - 9000 },
      rejected: ['c'],
    });
  });

  it("dates a converted quote's input no later than the oldest input of its rate", () => {
    const round = aggregate(
      [
        quote('a', 1.001, { symbol: 'USDT', observedAt: NOW - 20_000 }),
        quote('b', 0.999, { symbol: 'USDT' }),
        quote('a', 100),
        quote('c', 100, { quote: 'USDT' }),
      ],
      POLICY,
      NOW,
    );
    expect(round.outcomes.get('BTC')).toMatchObject({
      status: 'priced',
      price: { sources: ['a', 'c'], observedAt: NOW - 1000, oldestInputAt: NOW - 20_000 },
    });
  });
});
