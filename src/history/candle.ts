/** The candle intervals sold, shortest first. */
export const INTERVALS = ['1m', '5m', '15m', '1h', '4h', '1d'] as const;
export type Interval = (typeof INTERVALS)[number];

export const INTERVAL_MS: Readonly<Record<Interval, number>> = {
  '1m': 60_000,
  '5m': 300_000,
  '15m': 900_000,
  '1h': 3_600_000,
  '4h': 14_400_000,
  '1d': 86_400_000,
};

export function isInterval(value: string): value is Interval {
  return (INTERVALS as readonly string[]).includes(value);
}

/** The start of the candle of `interval` containing `time` (UTC-aligned, epoch ms). */
export function candleStart(time: number, interval: Interval): number {
  const ms = INTERVAL_MS[interval];
  return Math.floor(time / ms) * ms;
}

/** What a venue quotes a candle in; stablecoins are converted at 1.0 (docs/pricing.md). */
export type CandleQuote = 'USD' | 'USDT' | 'USDC';

/** One venue's candle as its endpoint gives it; `time` is its start, epoch ms. */
export interface VenueCandle {
  readonly time: number;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  /** Base-asset volume traded in the candle. */
  readonly volume: number;
}

/** One venue's candles for a range, with the quote currency they are in. */
export interface VenueSeries {
  readonly venue: string;
  readonly quote: CandleQuote;
  readonly candles: readonly VenueCandle[];
}

/** A served candle: the median across venues of open / high / low / close, volumes summed. */
export interface Candle {
  /** Start of the candle, ISO 8601. */
  readonly time: string;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  /** Base-asset volume, summed over the venues used. */
  readonly volume: number;
  /** Each venue's volume × its close in USD, summed. */
  readonly volumeUsd: number;
  /** The venues whose candles made this one, sorted. */
  readonly venues: readonly string[];
  /** False for the candle still open at the time of the answer: it may change. */
  readonly closed: boolean;
}
