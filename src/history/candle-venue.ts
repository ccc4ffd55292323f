import {
  expectArray,
  isRecord,
  parseAmount,
  parseEpoch,
  parsePrice,
} from '../markets/venue-json.js';
import type { CandleQuote, Interval, VenueCandle } from './candle.js';

/** A candle range as a venue call asks for it: aligned starts, inclusive, epoch ms. */
export interface CandleRange {
  readonly from: number;
  readonly to: number;
  /** How many candles the range holds. */
  readonly count: number;
  /** One candle's length, ms. */
  readonly stepMs: number;
}

/**
 * A venue's own candle endpoint: the intervals it serves under its names, how many candles one
 * call returns, the instrument it lists a symbol under, the request for a range and the parser
 * of its answer. The base URL is the markets' one (MARKET_<ID>_URL).
 */
export interface CandleVenue {
  readonly id: string;
  readonly defaultBaseUrl: string;
  readonly intervals: Readonly<Partial<Record<Interval, string>>>;
  /** Most candles one call returns; a longer range takes several calls. */
  readonly perCall: number;
  /** Whether the endpoint serves only its most recent candles (no range parameters). */
  readonly recentOnly?: boolean;
  instrument(symbol: string): { readonly name: string; readonly quote: CandleQuote };
  /** Path and query for the candles of `range` at the venue's `interval` name. */
  path(name: string, interval: string, range: CandleRange): string;
  /** The candles of a body, any order; throws a VenueError when the body is not a candle list. */
  parse(body: unknown): VenueCandle[];
}

/** Where each field sits in a venue's candle row. */
export interface RowLayout {
  readonly time: number;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  readonly volume: number;
  readonly unit: 's' | 'ms';
}

/** The candles of rows laid out as `layout` says; unreadable rows are skipped. */
export function rowCandles(rows: unknown, layout: RowLayout, what: string): VenueCandle[] {
  const candles: VenueCandle[] = [];
  for (const row of expectArray(rows, what)) {
    if (!Array.isArray(row)) continue;
    const candle = candleOf({
      time: row[layout.time],
      open: row[layout.open],
      high: row[layout.high],
      low: row[layout.low],
      close: row[layout.close],
      volume: row[layout.volume],
      unit: layout.unit,
    });
    if (candle !== undefined) candles.push(candle);
  }
  return candles;
}

/** The candles of objects with `timestamp` (s), `open`, `high`, `low`, `close`, `volume` fields. */
export function objectCandles(
  rows: unknown,
  fields: { readonly time: string; readonly unit: 's' | 'ms' },
  what: string,
): VenueCandle[] {
  const candles: VenueCandle[] = [];
  for (const row of expectArray(rows, what)) {
    if (!isRecord(row)) continue;
    const candle = candleOf({ ...row, time: row[fields.time], unit: fields.unit });
    if (candle !== undefined) candles.push(candle);
  }
  return candles;
}

function candleOf(raw: {
  time: unknown;
  open?: unknown;
  high?: unknown;
  low?: unknown;
  close?: unknown;
  volume?: unknown;
  unit: 's' | 'ms';
}): VenueCandle | undefined {
  const time = parseEpoch(raw.time, raw.unit);
  const open = parsePrice(raw.open);
  const high = parsePrice(raw.high);
  const low = parsePrice(raw.low);
  const close = parsePrice(raw.close);
  const volume = parseAmount(raw.volume);
  if ([time, open, high, low, close, volume].some((value) => value === undefined)) return undefined;
  return { time, open, high, low, close, volume } as VenueCandle;
}

/** Unix seconds of an epoch-ms time. */
export function seconds(ms: number): number {
  return Math.floor(ms / 1000);
}
