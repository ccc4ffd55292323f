import {
  INTERVAL_MS,
  type Candle,
  type CandleQuote,
  type Interval,
  type VenueCandle,
} from './candle.js';
import type { VenueSeries } from './candle.js';
import { lowerMedian, median } from '../aggregation/aggregate.js';

/** The prices' outlier knobs (PRICE_MAX_DEVIATION, PRICE_OUTLIER_FLOOR, PRICE_MAD_MULTIPLIER). */
export interface CandleOutlierPolicy {
  readonly maxDeviation: number;
  readonly outlierFloor: number;
  readonly madMultiplier: number;
}

/** 1.4826 × MAD estimates a standard deviation for normally distributed prices. */
const MAD_TO_SIGMA = 1.4826;

/** USD per unit of each quote currency a venue's candles are in (docs/pricing.md: 1.0 for history). */
export const HISTORY_QUOTE_RATES: Readonly<Record<CandleQuote, number>> = {
  USD: 1,
  USDT: 1,
  USDC: 1,
};

interface UsdCandle extends VenueCandle {
  readonly venue: string;
}

/**
 * The served candles of `interval` from `from` to `to` (inclusive, aligned starts): for each
 * start, the candles the venues have for it, converted to USD, a venue cut when any of its
 * open / high / low / close is further from the others' median than the prices' outlier
 * tolerance or its own candle is inconsistent (low above open or close, high below), then each
 * of open / high / low / close the median of the venues kept and the volumes summed. A start no
 * venue has a candle for is left out; the candle containing `now` is `closed: false`.
 */
export function aggregateCandles(
  series: readonly VenueSeries[],
  interval: Interval,
  range: { readonly from: number; readonly to: number },
  now: number,
  policy: CandleOutlierPolicy,
): Candle[] {
  const byStart = new Map<number, UsdCandle[]>();
  for (const { venue, quote, candles } of series) {
    const rate = HISTORY_QUOTE_RATES[quote];
    for (const candle of candles) {
      if (candle.time < range.from || candle.time > range.to || !consistent(candle)) continue;
      const usd: UsdCandle = {
        venue,
        time: candle.time,
        open: candle.open * rate,
        high: candle.high * rate,
        low: candle.low * rate,
        close: candle.close * rate,
        volume: candle.volume,
      };
      const group = byStart.get(candle.time);
      // one vote per venue: a venue answering a start twice keeps its first candle
      if (group === undefined) byStart.set(candle.time, [usd]);
      else if (!group.some((other) => other.venue === venue)) group.push(usd);
    }
  }
  const step = INTERVAL_MS[interval];
  return [...byStart.keys()]
    .sort((a, b) => a - b)
    .map((start) =>
      candleOf(start, withoutOutliers(byStart.get(start) ?? [], policy), start + step <= now),
    );
}

function consistent(candle: VenueCandle): boolean {
  const values = [candle.open, candle.high, candle.low, candle.close];
  return (
    values.every((value) => Number.isFinite(value) && value > 0) &&
    Number.isFinite(candle.volume) &&
    candle.volume >= 0 &&
    candle.low <= Math.min(candle.open, candle.close) &&
    candle.high >= Math.max(candle.open, candle.close)
  );
}

const FIELDS = ['open', 'high', 'low', 'close'] as const;

/** The venues whose every price lies within the tolerance around the venues' lower median. */
export function withoutOutliers<T extends Record<(typeof FIELDS)[number], number>>(
  candles: readonly T[],
  policy: CandleOutlierPolicy,
): T[] {
  let kept = [...candles];
  for (const field of FIELDS) {
    const values = kept.map((candle) => candle[field]);
    if (values.length < 2) break;
    const centre = lowerMedian(values);
    const mad = median(values.map((value) => Math.abs(value - centre)));
    const tolerance = Math.min(
      Math.max(policy.madMultiplier * MAD_TO_SIGMA * mad, policy.outlierFloor * centre),
      policy.maxDeviation * centre,
    );
    kept = kept.filter((candle) => Math.abs(candle[field] - centre) <= tolerance);
  }
  return kept;
}

function candleOf(start: number, candles: readonly UsdCandle[], closed: boolean): Candle {
  return {
    time: new Date(start).toISOString(),
    open: served(median(candles.map((candle) => candle.open))),
    high: served(median(candles.map((candle) => candle.high))),
    low: served(median(candles.map((candle) => candle.low))),
    close: served(median(candles.map((candle) => candle.close))),
    volume: served(candles.reduce((sum, candle) => sum + candle.volume, 0)),
    volumeUsd:
      Math.round(candles.reduce((sum, candle) => sum + candle.volume * candle.close, 0) * 100) /
      100,
    venues: candles.map((candle) => candle.venue).sort(),
    closed,
  };
}

/** Prices and volumes are served to 8 decimals, the attestation's fixed point. */
function served(value: number): number {
  return Number(value.toFixed(8));
}
