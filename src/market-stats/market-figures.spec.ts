import type { PricingPolicy } from '../aggregation/aggregate.js';
import { figures24h, marketCapOf, robustMedian, venueFigures } from './market-figures.js';
import type { MarketStats } from './venue-stats.js';

const NOW = Date.parse('2026-11-20T12:00:00.000Z');
const POLICY: PricingPolicy = {
  staleMs: 60_000,
  minSources: 2,
  maxDeviation: 0.02,
  outlierFloor: 0.005,
  madMultiplier: 5,
  volumeWeighted: false,
};
const CONTEXT = {
  policy: POLICY,
  rates: { USDT: 1.0003, USDC: 0.9999 },
  staleMs: 300_000,
  now: NOW,
};

function btc(fields: Partial<MarketStats> = {}): MarketStats {
  return { symbol: 'BTC', quote: 'USD', last: 100, observedAt: NOW, ...fields };
}

function venues(entries: Record<string, MarketStats[]>): Map<string, MarketStats[]> {
  return new Map(Object.entries(entries));
}

describe('venueFigures', () => {
  it("takes a venue's markets together: USDT and USDC converted, prices medians, volumes sums", () => {
    const figures = venueFigures(
      'okx',
      'BTC',
      [
        btc({
          quote: 'USDT',
          last: 100,
          open: 110,
          high: 120,
          low: 90,
          volume: 5,
          quoteVolume: 500,
        }),
        btc({
          quote: 'USDC',
          last: 102,
          open: 112,
          high: 122,
          low: 92,
          volume: 1,
          quoteVolume: 100,
        }),
      ],
      CONTEXT.rates,
    );
    expect(figures?.price).toBeCloseTo((100 * 1.0003 + 102 * 0.9999) / 2, 9);
    expect(figures?.open).toBeCloseTo((110 * 1.0003 + 112 * 0.9999) / 2, 9);
    expect(figures?.volume).toBe(6);
    expect(figures?.volumeUsd).toBeCloseTo(500 * 1.0003 + 100 * 0.9999, 6);
  });

  it('counts each market once and leaves out quotes without a rate, never assuming 1.0', () => {
    const figures = venueFigures(
      'okx',
      'BTC',
      [btc({ volume: 2 }), btc({ volume: 2 }), btc({ quote: 'USDT', volume: 7 })],
      { USDT: undefined, USDC: 1 },
    );
    expect(figures?.volume).toBe(2);
  });

  it('leaves a stablecoin quoted in a stablecoin out, and a market contradicting itself unbelieved', () => {
    const usdt = { symbol: 'USDT', last: 1, observedAt: NOW } as const;
    expect(venueFigures('okx', 'USDT', [{ ...usdt, quote: 'USDC' }], CONTEXT.rates)).toBe(
      undefined,
    );
    const figures = venueFigures('a', 'BTC', [btc({ high: 90, low: 110 })], CONTEXT.rates);
    expect(figures?.high).toBeUndefined();
    expect(figures?.low).toBeUndefined();
  });
});

describe('figures24h', () => {
  const honest = {
    a: [btc({ last: 100, open: 104, high: 106, low: 98, volume: 10, quoteVolume: 1000 })],
    b: [btc({ last: 100.2, open: 104.2, high: 106.4, low: 97.8, volume: 20 })],
    c: [btc({ last: 99.9, open: 103.9, high: 105.8, low: 98.2, volume: 30, quoteVolume: 3000 })],
  };

  it('gives medians of open, high and low and sums of the volumes that are reported', () => {
    expect(figures24h('BTC', venues(honest), CONTEXT)).toEqual({
      open24h: 104,
      high24h: 106,
      low24h: 98,
      volume24h: 60,
      volumeUsd24h: 4000,
      venues: 3,
    });
  });

  it('does not let a venue off by ×10 move any figure', () => {
    const lying = { d: [btc({ last: 1000, open: 1040, high: 1060, low: 980, volume: 600 })] };
    expect(figures24h('BTC', venues({ ...honest, ...lying }), CONTEXT)).toEqual(
      figures24h('BTC', venues(honest), CONTEXT),
    );
  });

  it('does not let one honest-priced venue with a wild high move the median', () => {
    const wild = { a: [btc({ ...honest.a[0], high: 1060 })] };
    expect(figures24h('BTC', venues({ ...honest, ...wild }), CONTEXT).high24h).toBeCloseTo(
      (106.4 + 105.8) / 2,
      9,
    );
  });

  it('makes a figure no venue reports null, never 0', () => {
    const bare = { a: [btc({ last: 100 })], b: [btc({ last: 100.1 })] };
    expect(figures24h('BTC', venues(bare), CONTEXT)).toEqual({
      open24h: null,
      high24h: null,
      low24h: null,
      volume24h: null,
      volumeUsd24h: null,
      venues: 2,
    });
  });

  it('never mixes windows: an open only one venue reports in the rolling window is null', () => {
    // Kraken's parser leaves its since-midnight open out: only `a` reports a rolling open
    const figures = figures24h(
      'BTC',
      venues({ a: [btc({ open: 104 })], kraken: [btc({ last: 100.1, high: 106 })] }),
      CONTEXT,
    );
    expect(figures.open24h).toBeNull();
    expect(figures.venues).toBe(2);
  });

  it('leaves out stale readings, and gives nothing below the quorum or without a majority', () => {
    const stale = { c: [btc({ ...honest.c[0], observedAt: NOW - 300_001 })] };
    expect(figures24h('BTC', venues({ ...honest, ...stale }), CONTEXT).venues).toBe(2);
    expect(figures24h('BTC', venues({ a: honest.a }), CONTEXT).venues).toBe(0);
    const split = venues({ a: [btc({ last: 100 })], b: [btc({ last: 150 })] });
    expect(figures24h('BTC', split, CONTEXT)).toMatchObject({ venues: 0, volume24h: null });
  });
});

describe('robustMedian', () => {
  it('needs the quorum and a majority after the outlier cut', () => {
    expect(robustMedian([100, undefined, 102], POLICY)).toBe(101);
    expect(robustMedian([100], POLICY)).toBeNull();
    expect(robustMedian([100, 1000], POLICY)).toBeNull();
  });
});

describe('marketCapOf', () => {
  it("takes a source's cap only when its price agrees with ours and its reading is fresh", () => {
    const cap = btc({ last: 100.5, marketCapUsd: 2e12 });
    expect(marketCapOf([cap], 100, CONTEXT)).toBe(2e12);
    expect(marketCapOf([{ ...cap, last: 1005 }], 100, CONTEXT)).toBeNull();
    expect(marketCapOf([{ ...cap, observedAt: NOW - 300_001 }], 100, CONTEXT)).toBeNull();
    expect(marketCapOf([], 100, CONTEXT)).toBeNull();
  });
});
