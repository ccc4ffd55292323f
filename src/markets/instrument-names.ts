import type { QuoteCurrency } from './price-source.js';

export interface Instrument<Quote extends string = string> {
  readonly base: string;
  readonly quote: Quote;
}

const QUOTE_CURRENCIES: ReadonlySet<string> = new Set<QuoteCurrency>(['USD', 'USDT', 'USDC']);

export function isQuoteCurrency(code: string): code is QuoteCurrency {
  return QUOTE_CURRENCIES.has(code);
}

/**
 * Splits a run-together instrument name (`BTCUSDT`) on the first of `quotes` it ends with, so
 * longer quotes must come first (`GUSD` before `USD`). Names ending in none of them give undefined.
 */
export function splitBySuffix<Quote extends string>(
  name: string,
  quotes: readonly Quote[],
): Instrument<Quote> | undefined {
  const upper = name.toUpperCase();
  const quote = quotes.find((candidate) => upper.endsWith(candidate));
  if (quote === undefined || upper.length === quote.length) return undefined;
  return { base: upper.slice(0, -quote.length), quote };
}

/** Splits a dashed instrument name (`BTC-USDT`) into base and quote. */
export function splitDashed(name: string): Instrument | undefined {
  const [base, quote, ...rest] = name.toUpperCase().split('-');
  if (base === undefined || base === '' || quote === undefined || quote === '' || rest.length > 0)
    return undefined;
  return { base, quote };
}
