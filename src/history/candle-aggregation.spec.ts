import { aggregateCandles, withoutOutliers } from './candle-aggregation.js';
import type { VenueCandle, VenueSeries } from './candle.js';

const POLICY = { maxDeviation: 0.02, outlierFloor: 0.005, madMultiplier: 5 };
const HOUR = 3_600_000;
const T0 = Date.parse('2026-11-20T00:00:00Z');

function candle(
  time: number,
  open: number,
  high: number,
  low: number,
  close: number,
  volume = 1,
): VenueCandle {
  return { time, open, high, low, close, volume };
}

function series(
  venue: string,
  candles: VenueCandle[],
  quote: VenueSeries['quote'] = 'USD',
): VenueSeries {
  return { venue, quote, candles };
}

const range = { from: T0, to: T0 + 2 * HOUR };
const later = T0 + 10 * HOUR;

describe('aggregateCandles', () => {
  it('takes the median of each price across venues, sums volumes and names the venues', () => {
    const [only] = aggregateCandles(
      [
        series('a', [candle(T0, 100, 110, 95, 105, 2)]),
        series('b', [candle(T0, 101, 111, 96, 104, 3)], 'USDT'),
        series('c', [candle(T0, 102, 109, 97, 106, 5)]),
      ],
      '1h',
      range,
      later,
      POLICY,
    );
    expect(only).toEqual({
      time: '2026-11-20T00:00:00.000Z',
      open: 101,
      high: 110,
      low: 96,
      close: 105,
      volume: 10,
      volumeUsd: 2 * 105 + 3 * 104 + 5 * 106,
      venues: ['a', 'b', 'c'],
      closed: true,
    });
  });

  it('averages the middle two for an even count', () => {
    const [only] = aggregateCandles(
      [
        series('a', [candle(T0, 100, 102, 99, 101)]),
        series('b', [candle(T0, 100.2, 102.4, 99.2, 101.4)]),
      ],
      '1h',
      range,
      later,
      POLICY,
    );
    expect(only).toMatchObject({ open: 100.1, high: 102.2, low: 99.1, close: 101.2 });
  });

  it('a venue ten times too high, or 5 % off, or with an inconsistent candle cannot move it', () => {
    const honest = [
      series('a', [candle(T0, 100, 110, 95, 105)]),
      series('b', [candle(T0, 100.1, 110.2, 95.1, 105.1)]),
      series('c', [candle(T0, 99.9, 109.9, 94.9, 104.9)]),
    ];
    const [tenTimes] = aggregateCandles(
      [...honest, series('x', [candle(T0, 1000, 1100, 950, 1050)])],
      '1h',
      range,
      later,
      POLICY,
    );
    const [lying] = aggregateCandles(
      [...honest, series('x', [candle(T0, 105, 115.5, 99.75, 110.25)])],
      '1h',
      range,
      later,
      POLICY,
    );
    const [inconsistent] = aggregateCandles(
      [...honest, series('x', [candle(T0, 100, 90, 95, 105)])],
      '1h',
      range,
      later,
      POLICY,
    );
    const [alone] = aggregateCandles(honest, '1h', range, later, POLICY);
    for (const cut of [tenTimes, lying, inconsistent]) {
      expect(cut).toEqual(alone);
      expect(cut?.venues).toEqual(['a', 'b', 'c']);
    }
  });

  it('leaves out starts no venue has, and venues missing a start do not count there', () => {
    const candles = aggregateCandles(
      [
        series('a', [candle(T0, 100, 101, 99, 100), candle(T0 + 2 * HOUR, 102, 103, 101, 102)]),
        series('b', [candle(T0 + 2 * HOUR, 102.2, 103.2, 101.2, 102.2)]),
      ],
      '1h',
      range,
      later,
      POLICY,
    );
    expect(candles.map((each) => [each.time, each.venues])).toEqual([
      ['2026-11-20T00:00:00.000Z', ['a']],
      ['2026-11-20T02:00:00.000Z', ['a', 'b']],
    ]);
  });

  it('marks the candle containing now open, and drops candles outside the range', () => {
    const now = T0 + 2 * HOUR + 60_000;
    const candles = aggregateCandles(
      [
        series(
          'a',
          [0, 1, 2, 3].map((hour) => candle(T0 + hour * HOUR, 100, 101, 99, 100)),
        ),
      ],
      '1h',
      range,
      now,
      POLICY,
    );
    expect(candles.map((each) => each.closed)).toEqual([true, true, false]);
  });

  it('keeps low ≤ open, close ≤ high in every candle made from consistent venue candles', () => {
    const [only] = aggregateCandles(
      [
        series('a', [candle(T0, 100, 100.5, 99, 99.5)]),
        series('b', [candle(T0, 99.2, 100.1, 99.1, 100)]),
        series('c', [candle(T0, 100.4, 100.6, 99.6, 99.8)]),
      ],
      '1h',
      range,
      later,
      POLICY,
    );
    expect(only?.low).toBeLessThanOrEqual(Math.min(only?.open ?? 0, only?.close ?? 0));
    expect(only?.high).toBeGreaterThanOrEqual(Math.max(only?.open ?? 0, only?.close ?? 0));
  });
});

describe('withoutOutliers', () => {
  it('keeps two venues that agree within the floor and one venue alone', () => {
    const a = { open: 100, high: 101, low: 99, close: 100 };
    const b = { open: 100.3, high: 101.3, low: 99.3, close: 100.3 };
    expect(withoutOutliers([a, b], POLICY)).toEqual([a, b]);
    expect(withoutOutliers([a], POLICY)).toEqual([a]);
  });
});
