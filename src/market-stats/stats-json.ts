import { parseAmount, parsePrice } from '../markets/venue-json.js';

const SIGNED_DECIMAL = /^-?\d{1,20}(\.\d{1,20})?$/;

/** A signed decimal such as a 24 h change, as a string or a finite JSON number. */
export function parseSigned(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || !SIGNED_DECIMAL.test(value)) return undefined;
  return Number(value);
}

/**
 * The figures of one market, each only when the venue wrote it as a valid number: prices
 * positive, volumes non-negative. A market without a last price gives undefined.
 */
export function marketFigures(raw: {
  readonly last: unknown;
  readonly open?: unknown;
  readonly high?: unknown;
  readonly low?: unknown;
  readonly volume?: unknown;
  readonly quoteVolume?: unknown;
}):
  | {
      last: number;
      open?: number;
      high?: number;
      low?: number;
      volume?: number;
      quoteVolume?: number;
    }
  | undefined {
  const last = parsePrice(raw.last);
  if (last === undefined) return undefined;
  return withoutUndefined({
    last,
    open: parsePrice(raw.open),
    high: parsePrice(raw.high),
    low: parsePrice(raw.low),
    volume: parseAmount(raw.volume),
    quoteVolume: parseAmount(raw.quoteVolume),
  });
}

/** The open a venue implies by its last price and its 24 h change as a fraction (−0.0168). */
export function openFromChange(last: number, fraction: number | undefined): number | undefined {
  if (fraction === undefined || fraction <= -1) return undefined;
  return last / (1 + fraction);
}

/** The product of two reported figures, when both are there. */
export function productOf(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : a * b;
}

/** Leaves out absent figures, so a spread of optional fields stays exact. */
export function withoutUndefined<T extends Record<string, unknown>>(
  record: T,
): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]: Exclude<T[K], undefined>;
  };
}
