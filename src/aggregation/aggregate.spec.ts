import fc from 'fast-check';
import type { RawQuote } from '../markets/price-source.js';
import {
  aggregate,
  median,
  outlierTolerance,
  volumeWeightedMedian,
  type PricingPolicy,
  type SymbolOutcome,
} from './aggregate.js';

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

function outcomeFor(quotes: RawQuote[], policy = POLICY, symbol = 'BTC'): SymbolOutcome {
  const outcome = aggregate(quotes, policy, NOW).outcomes.get(symbol);
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
      price: {
        symbol: 'BTC',
        price: 100.5,
        sources: ['a', 'b', 'c'],
        observedAt: NOW - 1000,
        oldestInputAt: NOW - 1000,
        spread: 1 / 100.5,
      },
      rejected: [],
    });
  });

  it('measures the spread over the agreeing venues only, relative to the price', () => {
    const outcome = outcomeFor([quote('a', 100), quote('b', 100.2), quote('c', 100.1)]);
    expect(outcome).toMatchObject({ status: 'priced', price: { price: 100.1 } });
    if (outcome.status !== 'priced') throw new Error('expected a price');
    expect(outcome.price.spread).toBeCloseTo(0.2 / 100.1, 12);
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

  it('treats an observation dated in the future as made now', () => {
    const outcome = outcomeFor([quote('a', 100, { observedAt: NOW + 3_600_000 }), quote('b', 100)]);
    expect(outcome.status === 'priced' && outcome.price.observedAt).toBe(NOW);
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
    expect(outcomes.outcomes.get('BTC')).toMatchObject({
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
    expect([...outcomes.outcomes.keys()].sort()).toEqual(['BTC', 'ETH']);
    expect(outcomes.outcomes.get('ETH')).toMatchObject({
      status: 'priced',
      price: { price: 5.01 },
    });
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
    it('serve their midpoint when they agree within the tolerance', () => {
      expect(servedPrice([quote('a', 100), quote('b', 101.5)])).toBe(100.75);
    });

    it.each([10, 0.1, 1.05, 0.95, 1.021, 1.039])(
      'give no price when one reports x%d of the other',
      (factor) => {
        expect(outcomeFor([quote('a', 100), quote('b', 100 * factor)])).toEqual({
          status: 'unpriced',
          reason: 'no_agreement',
          venues: ['a', 'b'],
        });
      },
    );

    it('agree when exactly the tolerance apart', () => {
      // Centre 100 (the lower quote); 102 is exactly 2% away.
      expect(servedPrice([quote('a', 100), quote('b', 102)])).toBe(101);
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

  describe('a push oracle on its own staleness rule (Chainlink)', () => {
    const RULE = { heartbeatMs: 1_200_000, deviation: 0.0015 };
    const venues = [quote('coinbase', 91_200), quote('kraken', 91_210), quote('bitstamp', 91_190)];
    const oracle = (price: number, ageMs: number, updateRule = RULE) =>
      quote('chainlink', price, { observedAt: NOW - ageMs, updateRule });

    it('counts an answer older than PRICE_STALE_MS within its heartbeat and deviation threshold', () => {
      const outcome = outcomeFor([...venues, oracle(91_250, 600_000)]);
      expect(outcome).toMatchObject({ status: 'priced' });
      expect(outcome.status === 'priced' && outcome.price.sources).toContain('chainlink');
      // the served price's age still comes from the venues current by age
      expect(outcome.status === 'priced' && outcome.price.observedAt).toBe(NOW - 1000);
    });

    it('treats an answer past its deviation threshold as lagging: not current, not an outlier', () => {
      const outcome = outcomeFor([...venues, oracle(91_200 * 1.002, 600_000)]);
      expect(outcome).toMatchObject({ status: 'priced', rejected: [] });
      expect(outcome.status === 'priced' && outcome.price.sources).not.toContain('chainlink');
    });

    it('drops an answer older than its heartbeat', () => {
      const outcome = outcomeFor([...venues, oracle(91_200, 1_200_001)]);
      expect(outcome.status === 'priced' && outcome.price.sources).not.toContain('chainlink');
    });

    it('needs a venue current by age to be held against, and then counts towards the quorum', () => {
      const stale = venues.map((venue) => ({ ...venue, observedAt: NOW - 120_000 }));
      expect(outcomeFor([oracle(91_200, 600_000), ...stale])).toMatchObject({
        status: 'unpriced',
        reason: 'stale',
      });
      expect(
        outcomeFor([oracle(91_200, 600_000), quote('kraken', 91_210)], {
          ...POLICY,
          minSources: 2,
        }),
      ).toMatchObject({ status: 'priced', price: { sources: ['chainlink', 'kraken'] } });
    });

    it('without an update rule, an answer counts only while younger than PRICE_STALE_MS', () => {
      const plain = quote('chainlink', 91_200, { observedAt: NOW - 600_000 });
      const outcome = outcomeFor([...venues, plain]);
      expect(outcome.status === 'priced' && outcome.price.sources).not.toContain('chainlink');
    });
  });

  describe('stablecoin normalisation', () => {
    const usdtRate = [quote('a', 1.001, { symbol: 'USDT' }), quote('b', 0.999, { symbol: 'USDT' })];
    const usdcRate = [quote('a', 0.9998, { symbol: 'USDC' }), quote('b', 1.0, { symbol: 'USDC' })];

    it('converts USDT and USDC quotes with the rates USD venues gave this round', () => {
      const round = aggregate(
        [
          ...usdtRate,
          ...usdcRate,
          quote('c', 100, { quote: 'USDT' }),
          quote('d', 100.1, { quote: 'USDC' }),
          quote('e', 100.05),
        ],
        POLICY,
        NOW,
      );
      expect(round.rates.USDT).toBeCloseTo(1.0, 12);
      expect(round.rates.USDC).toBeCloseTo(0.9999, 12);
      const btc = round.outcomes.get('BTC');
      expect(btc).toMatchObject({ status: 'priced', price: { sources: ['c', 'd', 'e'] } });
      expect(btc?.status === 'priced' && btc.price.price).toBeCloseTo(100.05, 9);
    });

    it('leaves out quotes whose stablecoin has no agreed USD rate, never assuming 1.0', () => {
      const round = aggregate(
        [
          quote('a', 1.0, { symbol: 'USDT' }),
          quote('c', 100, { quote: 'USDT' }),
          quote('d', 100, { quote: 'USDT' }),
        ],
        POLICY,
        NOW,
      );
      expect(round.rates.USDT).toBeUndefined();
      expect(round.outcomes.has('BTC')).toBe(false);
      expect(Object.fromEntries(round.unconverted)).toEqual({ c: 1, d: 1 });
    });

    it('does not count stablecoin-to-stablecoin pairs as unconverted', () => {
      const round = aggregate(
        [...usdtRate, quote('c', 1, { symbol: 'USDC', quote: 'USDT' })],
        POLICY,
        NOW,
      );
      expect(round.unconverted.size).toBe(0);
    });

    it('prices a stablecoin from USD venues only', () => {
      const round = aggregate(
        [
          ...usdtRate,
          quote('c', 0.5, { symbol: 'USDC', quote: 'USDT' }),
          quote('d', 0.5, { symbol: 'USDC', quote: 'USDT' }),
        ],
        POLICY,
        NOW,
      );
      expect(round.outcomes.has('USDC')).toBe(false);
    });

    it('counts a venue quoting an asset in USDT and USDC once', () => {
      const round = aggregate(
        [
          ...usdtRate,
          ...usdcRate,
          quote('c', 100, { quote: 'USDT' }),
          quote('c', 100.02, { quote: 'USDC' }),
        ],
        POLICY,
        NOW,
      );
      expect(round.outcomes.get('BTC')).toMatchObject({
        status: 'unpriced',
        reason: 'below_quorum',
      });
    });
  });

  describe('outlier tolerance', () => {
    const prices = (...values: number[]) => values.map((price) => ({ price }));

    it('is the floor when the venues agree exactly', () => {
      expect(outlierTolerance(prices(100, 100, 100), 100, POLICY)).toBeCloseTo(0.5, 12);
    });

    it('follows the venues own spread between floor and ceiling', () => {
      // MAD 0.1 → 5 × 1.4826 × 0.1 = 0.7413
      expect(outlierTolerance(prices(99.9, 100, 100.1), 100, POLICY)).toBeCloseTo(0.7413, 12);
    });

    it('never exceeds the ceiling, however scattered the venues', () => {
      expect(outlierTolerance(prices(50, 100, 150), 100, POLICY)).toBeCloseTo(2, 12);
    });

    it('drops a venue 1% off when the others agree to 0.01%', () => {
      const outcome = outcomeFor([
        quote('a', 100),
        quote('b', 100.01),
        quote('c', 99.99),
        quote('d', 101),
      ]);
      expect(outcome).toMatchObject({ status: 'priced', rejected: ['d'], price: { price: 100 } });
    });

    it('keeps a venue 1% off when the venues themselves spread that wide', () => {
      const outcome = outcomeFor([
        quote('a', 99.4),
        quote('b', 100),
        quote('c', 100.6),
        quote('d', 101),
      ]);
      expect(outcome).toMatchObject({ status: 'priced', rejected: [] });
    });
  });

  describe('volume weighting (opt-in)', () => {
    const weighted = { ...POLICY, volumeWeighted: true };

    it('leans towards the venues that trade more', () => {
      const quotes = [
        quote('a', 100, { volume: 10 }),
        quote('b', 100.2, { volume: 10 }),
        quote('c', 100.4, { volume: 1 }),
      ];
      expect(servedPrice(quotes, weighted)).toBe(100.2);
      // c's volume of 10 is capped at twice the median (1): weights 1, 1, 2 → midpoint of b and c.
      const heavyTail = [
        quote('a', 100, { volume: 1 }),
        quote('b', 100.2, { volume: 1 }),
        quote('c', 100.4, { volume: 10 }),
      ];
      expect(servedPrice(heavyTail, weighted)).toBeCloseTo(100.3, 12);
    });

    it('caps any venue at twice the median weight', () => {
      const venues = [
        { source: 'a', price: 100, observedAt: NOW, volume: 1 },
        { source: 'b', price: 101, observedAt: NOW, volume: 1 },
        { source: 'c', price: 102, observedAt: NOW, volume: 1000 },
      ];
      // Weights 1, 1, 2 (capped): half of 4 is reached at b → midpoint of b and c.
      expect(volumeWeightedMedian(venues)).toBe(101.5);
    });

    it('falls back to the plain median when a venue reports no volume', () => {
      const quotes = [
        quote('a', 100, { volume: 10 }),
        quote('b', 100.2),
        quote('c', 100.4, { volume: 1 }),
      ];
      expect(servedPrice(quotes, weighted)).toBe(100.2);
    });
  });

  describe('properties', () => {
    const policy = POLICY;
    const band = { min: 100, max: 100.4 };
    const honestPrice = fc.double({ min: band.min, max: band.max, noNaN: true });

    it('any minority of arbitrary venues leaves the price inside the honest band', () => {
      const anyPrice = fc.oneof(
        fc.double({ min: 1e-12, max: 1e15, noNaN: true }),
        fc.double({ min: 95, max: 105, noNaN: true }),
      );
      fc.assert(
        fc.property(
          fc
            .array(honestPrice, { minLength: 2, maxLength: 9 })
            .chain((honest) =>
              fc.tuple(
                fc.constant(honest),
                fc.array(anyPrice, { maxLength: Math.ceil(honest.length / 2) - 1 }),
              ),
            ),
          fc.boolean(),
          ([honest, hostile], stale) => {
            const quotes = [
              ...honest.map((price, index) => quote(`h${index}`, price)),
              ...hostile.map((price, index) => quote(`x${index}`, price)),
              // A stale venue at any price changes nothing either.
              ...(stale ? [quote('old', 1e6, { observedAt: NOW - policy.staleMs - 1 })] : []),
            ];
            const price = servedPrice(quotes, policy);
            expect(price).toBeDefined();
            expect(price).toBeGreaterThanOrEqual(band.min);
            expect(price).toBeLessThanOrEqual(band.max);
          },
        ),
        { numRuns: 500 },
      );
    });

    it('without an honest majority no price is served', () => {
      fc.assert(
        fc.property(
          fc
            .array(honestPrice, { minLength: 1, maxLength: 4 })
            .chain((honest) =>
              fc.tuple(
                fc.constant(honest),
                fc.integer({ min: honest.length, max: honest.length + 3 }),
                fc.double({ min: 1.1, max: 1000, noNaN: true }),
              ),
            ),
          ([honest, hostileCount, spread]) => {
            // Hostile venues disagree with the honest band and with each other.
            const hostile = Array.from({ length: hostileCount }, (_unused, index) =>
              index % 2 === 0 ? 100 * spread ** (index + 1) : 100 / spread ** (index + 1),
            );
            const quotes = [
              ...honest.map((price, index) => quote(`h${index}`, price)),
              ...hostile.map((price, index) => quote(`x${index}`, price)),
            ];
            expect(servedPrice(quotes, policy)).toBeUndefined();
          },
        ),
        { numRuns: 500 },
      );
    });
  });
});
