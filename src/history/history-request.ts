import { ApiError, ErrorCode } from '../common/api-error.js';
import { SYMBOL_PATTERN } from '../common/symbol-format.js';
import { INTERVALS, INTERVAL_MS, candleStart, isInterval, type Interval } from './candle.js';

/** Most candles one `getOhlc` request may ask for. */
export const MAX_CANDLES = 500;
/** Candles a request without `start` gets: the last ones up to `end`. */
export const DEFAULT_CANDLES = 100;
/** The interval a request without `interval` gets. */
export const DEFAULT_INTERVAL: Interval = '1h';

/** An OHLC request, checked: aligned candle starts from `from` to `to` inclusive. */
export interface OhlcRequest {
  readonly symbol: string;
  readonly interval: Interval;
  readonly from: number;
  readonly to: number;
  readonly count: number;
}

/** Unix seconds: 1 to 11 digits (up to the year 5138). */
const UNIX_SECONDS = /^\d{1,11}$/;
/** ISO 8601 date-time in UTC or with an offset, or a plain date (midnight UTC). */
const ISO_8601 =
  /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

function badRequest(detail: string): ApiError {
  return new ApiError(ErrorCode.BadRequest, detail);
}

/** A time as ISO 8601 or Unix seconds, epoch ms; 400 naming `name` when it is neither. */
export function parseTime(name: string, value: string): number {
  let ms = Number.NaN;
  if (UNIX_SECONDS.test(value)) ms = Number(value) * 1000;
  else if (ISO_8601.test(value)) ms = Date.parse(value);
  if (!Number.isFinite(ms)) {
    throw badRequest(
      `${name} must be ISO 8601 (2026-01-01T00:00:00Z) or Unix seconds (1767225600); got "${value}".`,
    );
  }
  return ms;
}

/** The symbol as the catalogue writes it (upper-case); 400 when malformed. */
export function parseSymbol(value: string | undefined): string {
  if (value === undefined || !SYMBOL_PATTERN.test(value)) {
    throw new ApiError(ErrorCode.InvalidSymbol, 'A symbol is 1 to 15 letters or digits.');
  }
  return value.toUpperCase();
}

/** A single query value: a repeated parameter is refused rather than guessed at. */
function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badRequest(`${name} may be given once.`);
  return value;
}

/**
 * `interval`, `start`, `end` of an OHLC request at `now`: the interval offered (default 1h), the
 * times readable, `start` not in the future and not after `end` (`end` in the future is now),
 * at most 500 candles; without `start`, the last 100 candles up to `end`.
 */
export function parseOhlcQuery(
  symbol: string,
  query: Record<string, unknown>,
  now: number,
): OhlcRequest {
  const intervalText = single(query, 'interval') ?? DEFAULT_INTERVAL;
  if (!isInterval(intervalText)) {
    throw badRequest(`interval must be one of ${INTERVALS.join(', ')}; got "${intervalText}".`);
  }
  const interval = intervalText;
  const step = INTERVAL_MS[interval];
  const startText = single(query, 'start');
  const endText = single(query, 'end');
  const start = startText === undefined ? undefined : parseTime('start', startText);
  const end = endText === undefined ? now : parseTime('end', endText);
  if (start !== undefined && start > now) throw badRequest('start is in the future.');
  if (start !== undefined && start > end) throw badRequest('start is after end.');
  const to = candleStart(Math.min(end, now), interval);
  const from =
    start === undefined ? to - (DEFAULT_CANDLES - 1) * step : candleStart(start, interval);
  const count = (to - from) / step + 1;
  if (count > MAX_CANDLES) {
    throw badRequest(
      `The range holds ${count} ${interval} candles; at most ${MAX_CANDLES} per request.`,
    );
  }
  return { symbol, interval, from, to, count };
}

/** `t` of a price-at request at `now`: required, readable, not in the future. */
export function parsePriceAtQuery(query: Record<string, unknown>, now: number): number {
  const text = single(query, 't');
  if (text === undefined) throw badRequest('t is required: ISO 8601 or Unix seconds.');
  const t = parseTime('t', text);
  if (t > now) throw badRequest('t is in the future.');
  return t;
}
