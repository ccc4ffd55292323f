import { isRecord } from '../common/json.js';
import { VenueError } from './venue-error.js';

/** Narrowing helpers for untrusted venue JSON. */
export { isRecord };

export function expectRecord(value: unknown, what: string): Record<string, unknown> {
  if (!isRecord(value)) throw new VenueError('invalid_body', `${what} is not an object`);
  return value;
}

export function expectArray(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new VenueError('invalid_body', `${what} is not an array`);
  return value;
}

const PLAIN_DECIMAL = /^\d{1,20}(\.\d{1,20})?$/;

/**
 * A price as venues write it: a plain positive decimal string, or a JSON number from venues
 * that send numbers. Exponent notation, signs, NaN, Infinity and zero are refused.
 */
export function parsePrice(value: unknown): number | undefined {
  const parsed = parseDecimal(value);
  return parsed !== undefined && parsed > 0 ? parsed : undefined;
}

/** A non-negative decimal such as a 24 h volume. */
export function parseAmount(value: unknown): number | undefined {
  return parseDecimal(value);
}

function parseDecimal(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string' || !PLAIN_DECIMAL.test(value)) return undefined;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : undefined;
}

/** Unix seconds or milliseconds as venues send them, to epoch milliseconds. */
export function parseEpoch(value: unknown, unit: 's' | 'ms'): number | undefined {
  const parsed = parseDecimal(value);
  if (parsed === undefined || parsed === 0) return undefined;
  return unit === 's' ? parsed * 1000 : parsed;
}
