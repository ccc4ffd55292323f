import type { RawQuote } from '../markets/price-source.js';

/** The knobs of the pricing policy; see docs/architecture.md for the reasons. */
export interface PricingPolicy {
  /** A quote observed longer ago than this is ignored. */
  readonly staleMs: number;
  /** Quorum: distinct venues that must agree before a price is served. */
  readonly minSources: number;
  /** A quote further than this fraction from the median is dropped as an outlier. */
  readonly maxDeviation: number;
}

/** A served price: the median of the venues that agreed, and who they were. */
export interface AggregatedPrice {
  readonly symbol: string;
  readonly price: number;
  /** Venues whose quotes made the price, sorted. */
  readonly sources: readonly string[];
  /** Newest observation among those venues; the price goes stale from here. */
  readonly observedAt: number;
}

export type UnpricedReason = 'stale' | 'below_quorum' | 'no_agreement';

export type SymbolOutcome =
  | {
      readonly status: 'priced';
      readonly price: AggregatedPrice;
      readonly rejected: readonly string[];
    }
  | {
      readonly status: 'unpriced';
      readonly reason: UnpricedReason;
      readonly venues: readonly string[];
    };

/**
 * Turns one round of venue quotes into a price per symbol, or a reason for none:
 * stale quotes are ignored, each venue counts once, quotes too far from the median are
 * dropped, and the median of what is left is served only when a quorum and a majority of
 * the fresh venues agree. Only USD quotes are priced.
 */
export function aggregate(
  quotes: readonly RawQuote[],
  policy: PricingPolicy,
  now: number,
): Map<string, SymbolOutcome> {
  const outcomes = new Map<string, SymbolOutcome>();
  for (const [symbol, symbolQuotes] of groupBySymbol(quotes)) {
    outcomes.set(symbol, aggregateSymbol(symbol, symbolQuotes, policy, now));
  }
  return outcomes;
}

interface VenueQuote {
  readonly source: string;
  readonly price: number;
  readonly observedAt: number;
}

function aggregateSymbol(
  symbol: string,
  quotes: readonly RawQuote[],
  policy: PricingPolicy,
  now: number,
): SymbolOutcome {
  const venues = [...new Set(quotes.map((quote) => quote.source))].sort();
  const fresh = onePerVenue(quotes.filter((quote) => now - quote.observedAt <= policy.staleMs));
  if (fresh.length === 0) return { status: 'unpriced', reason: 'stale', venues };
  if (fresh.length < policy.minSources)
    return { status: 'unpriced', reason: 'below_quorum', venues };

  const centre = median(fresh.map((quote) => quote.price));
  const agreeing = fresh.filter(
    (quote) => Math.abs(quote.price - centre) / centre <= policy.maxDeviation,
  );
  if (agreeing.length < policy.minSources || agreeing.length * 2 <= fresh.length) {
    return { status: 'unpriced', reason: 'no_agreement', venues };
  }
  const sources = agreeing.map((quote) => quote.source).sort();
  return {
    status: 'priced',
    price: {
      symbol,
      price: median(agreeing.map((quote) => quote.price)),
      sources,
      observedAt: Math.max(...agreeing.map((quote) => quote.observedAt)),
    },
    rejected: fresh
      .map((quote) => quote.source)
      .filter((source) => !sources.includes(source))
      .sort(),
  };
}

function groupBySymbol(quotes: readonly RawQuote[]): Map<string, RawQuote[]> {
  const groups = new Map<string, RawQuote[]>();
  for (const quote of quotes) {
    if (quote.quote !== 'USD' || !Number.isFinite(quote.price) || quote.price <= 0) continue;
    const group = groups.get(quote.symbol);
    if (group === undefined) groups.set(quote.symbol, [quote]);
    else group.push(quote);
  }
  return groups;
}

/** A venue listing one instrument twice still casts one vote: the median of its own quotes. */
function onePerVenue(quotes: readonly RawQuote[]): VenueQuote[] {
  const bySource = new Map<string, RawQuote[]>();
  for (const quote of quotes)
    bySource.set(quote.source, [...(bySource.get(quote.source) ?? []), quote]);
  return [...bySource].map(([source, own]) => ({
    source,
    price: median(own.map((quote) => quote.price)),
    observedAt: Math.max(...own.map((quote) => quote.observedAt)),
  }));
}

/** Median of a non-empty list: the middle value, or the mean of the two middle values. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty list');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const upper = sorted[middle] as number;
  return sorted.length % 2 === 1 ? upper : ((sorted[middle - 1] as number) + upper) / 2;
}
