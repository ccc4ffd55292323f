import fc from 'fast-check';
import type { RawQuote } from '../markets/price-source.js';
import { aggregate, median, type PricingPolicy, type SymbolOutcome } from './aggregate.js';

const NOW = 1_795_176_000_000;
const POLICY: PricingPolicy = { staleMs: 60_000, minSources: 2, maxDeviation: 0.02 };

function quote(source: string, price: number, overrides: Partial<RawQuote> = {}): RawQuote {
  return { source, symbol: 'BTC', quote: 'USD', price, observedAt: NOW - 1000, ...overrides };
}

function outcomeFor(quotes: RawQuote[], policy = POLICY, symbol = 'BTC'): SymbolOutcome {
  const outcome = aggregate(quotes, policy, NOW).get(symbol);
  if (outcome === undefined) throw new Error(`no outcome for ${symbol}`);
  return outcome;
}

function servedPrice(quotes: RawQuote[], policy = POLICY): number | undefined {
  const outcome = outcomeFor(quotes, policy);
  return outcome.status === 'priced' ? outcome.price.price : undefined;
}

describe('median', () => {
  it.each([
    [[5], 5],
    [[3, 1, 2], 2],
    [[4, 1, 3, 2], 2.5],
    [[10, 10, 1000], 10],
  ])('median(%j) = %d', (values, expected) => {
    expect(median(values)).toBe(expected);
  });

  it('refuses an empty list', () => {
    expect(() => median([])).toThrow(RangeError);
  });
});

describe('aggregate', () => {
  it('serves the median of agreeing venues and names them', () => {
    const outcome = outcomeFor([quote('a', 100), quote('b', 101), quote('c', 100.5)]);
    expect(outcome).toEqual({
      status: 'priced',
      price: { symbol: 'BTC', price: 100.5, sources: ['a', 'b', 'c'], observedAt: NOW - 1000 },
      rejected: [],
    });
  });

  it('serves the mean of the middle pair for an even count', () => {
    expect(
      servedPrice([quote('a', 100), quote('b', 101), quote('c', 100.4), quote('d', 100.2)]),
    ).toBeCloseTo(100.3, 9);
  });

  it('takes the newest contributing observation as the price time', () => {
    const outcome = outcomeFor([
      quote('a', 100, { observedAt: NOW - 5000 }),
      quote('b', 100, { observedAt: NOW - 2000 }),
    ]);
    expect(outcome.status === 'priced' && outcome.price.observedAt).toBe(NOW - 2000);
  });

  it('ignores stale quotes, and says so when all are stale', () => {
    const stale = NOW - POLICY.staleMs - 1;
    expect(
      servedPrice([quote('a', 100), quote('b', 102), quote('c', 500, { observedAt: stale })]),
    ).toBe(101);
    expect(
      outcomeFor([quote('a', 100, { observedAt: stale }), quote('b', 100, { observedAt: stale })]),
    ).toEqual({
      status: 'unpriced',
      reason: 'stale',
      venues: ['a', 'b'],
    });
  });

  it('keeps a quote exactly at the staleness limit', () => {
    const edge = NOW - POLICY.staleMs;
    expect(
      servedPrice([quote('a', 100, { observedAt: edge }), quote('b', 100, { observedAt: edge })]),
    ).toBe(100);
  });

  it('enforces the quorum of distinct venues', () => {
    expect(outcomeFor([quote('a', 100)])).toMatchObject({
      status: 'unpriced',
      reason: 'below_quorum',
    });
    expect(servedPrice([quote('a', 100)], { ...POLICY, minSources: 1 })).toBe(100);
    expect(
      outcomeFor([quote('a', 100), quote('b', 100)], { ...POLICY, minSources: 3 }),
    ).toMatchObject({
      status: 'unpriced',
      reason: 'below_quorum',
    });
  });

  it('counts a venue listing an instrument twice once, at the median of its own quotes', () => {
    expect(outcomeFor([quote('a', 100), quote('a', 100.2)])).toMatchObject({
      reason: 'below_quorum',
    });
    expect(servedPrice([quote('a', 100), quote('a', 102), quote('b', 101.5)])).toBe(101.25);
  });

  it('prices only USD quotes and only finite positive prices', () => {
    const outcomes = aggregate(
      [
        quote('a', 100),
        quote('b', 100),
        quote('c', 90, { quote: 'USDT' }),
        quote('d', Number.NaN),
        quote('e', -5),
        quote('f', Number.POSITIVE_INFINITY),
        quote('g', 0),
      ],
      POLICY,
      NOW,
    );
    expect(outcomes.get('BTC')).toMatchObject({
      status: 'priced',
      price: { price: 100, sources: ['a', 'b'] },
    });
  });

  it('aggregates each symbol on its own', () => {
    const outcomes = aggregate(
      [
        quote('a', 100),
        quote('b', 100),
        quote('a', 5, { symbol: 'ETH' }),
        quote('b', 5.02, { symbol: 'ETH' }),
      ],
      POLICY,
      NOW,
    );
    expect([...outcomes.keys()].sort()).toEqual(['BTC', 'ETH']);
    expect(outcomes.get('ETH')).toMatchObject({ status: 'priced', price: { price: 5.01 } });
  });

  describe('a single wildly wrong venue', () => {
    const factors = [10, 0.1, 1000, 0.001, 1.5, 0.6];
    const honestSets = [
      [100, 100.4, 99.8],
      [100, 100.4, 99.8, 100.1],
      [100, 100.4, 99.8, 100.1, 99.9],
      [100, 100.4, 99.8, 100.1, 99.9, 100.3, 100.05],
    ];

    it.each(honestSets.flatMap((honest) => factors.map((factor) => [honest, factor] as const)))(
      'does not move the price of honest venues %j when one reports x%d',
      (honest, factor) => {
        const honestQuotes = honest.map((price, index) => quote(`h${index}`, price));
        const expected = servedPrice(honestQuotes);
        expect(expected).toBeDefined();
        for (let position = 0; position <= honest.length; position += 1) {
          const wild = quote('wild', 100 * factor);
          const quotes = [
            ...honestQuotes.slice(0, position),
            wild,
            ...honestQuotes.slice(position),
          ];
          const outcome = outcomeFor(quotes);
          expect(outcome).toMatchObject({ status: 'priced', rejected: ['wild'] });
          expect(servedPrice(quotes)).toBe(expected);
        }
      },
    );
  });

  describe('two venues', () => {
    it('serve their midpoint when within the tolerance of it', () => {
      expect(servedPrice([quote('a', 100), quote('b', 103)])).toBe(101.5);
    });

    it.each([10, 0.1, 1.05, 0.95])('give no price when one reports x%d of the other', (factor) => {
      expect(outcomeFor([quote('a', 100), quote('b', 100 * factor)])).toEqual({
        status: 'unpriced',
        reason: 'no_agreement',
        venues: ['a', 'b'],
      });
    });

    it('keep a quote exactly at the tolerance', () => {
      // Median 100; 98 and 102 are each exactly 2% away.
      expect(servedPrice([quote('a', 98), quote('b', 102)])).toBe(100);
    });
  });

  it('gives no price when the venues split evenly into two camps', () => {
    expect(
      outcomeFor([quote('a', 100), quote('b', 100.1), quote('c', 1000), quote('d', 1000.5)]),
    ).toMatchObject({
      status: 'unpriced',
      reason: 'no_agreement',
    });
  });

  it('never serves a price outside the honest range when a minority is arbitrary (property)', () => {
    const honestPrice = fc.double({ min: 99, max: 101, noNaN: true });
    const anyPrice = fc.double({ min: 1e-9, max: 1e12, noNaN: true });
    fc.assert(
      fc.property(
        fc
          .array(honestPrice, { minLength: 3, maxLength: 9 })
          .chain((honest) =>
            fc.tuple(
              fc.constant(honest),
              fc.array(anyPrice, { maxLength: Math.floor((honest.length - 1) / 2) }),
            ),
          ),
        ([honest, hostile]) => {
          const quotes = [
            ...honest.map((price, index) => quote(`h${index}`, price)),
            ...hostile.map((price, index) => quote(`x${index}`, price)),
          ];
          const price = servedPrice(quotes, { ...POLICY, maxDeviation: 0.05 });
          expect(price).toBeDefined();
          expect(price).toBeGreaterThanOrEqual(Math.min(...honest));
          expect(price).toBeLessThanOrEqual(Math.max(...honest));
        },
      ),
    );
  });
});
