import type { QuoteCurrency, RawQuote } from '../markets/price-source.js';

/** The knobs of the pricing policy; docs/pricing.md gives the reasons for each. */
export interface PricingPolicy {
  /** A quote observed longer ago than this is ignored. */
  readonly staleMs: number;
  /** Quorum: distinct venues that must agree before a price is served. */
  readonly minSources: number;
  /** Outlier tolerance ceiling, as a fraction of the median: never wider than this. */
  readonly maxDeviation: number;
  /** Outlier tolerance floor, as a fraction of the median: never narrower than this. */
  readonly outlierFloor: number;
  /** Between floor and ceiling, the tolerance is this many robust standard deviations (1.4826 MAD). */
  readonly madMultiplier: number;
  /** Weight agreeing venues by 24 h volume (capped) when every one of them reports it. */
  readonly volumeWeighted: boolean;
}

/** A served price, who made it, and how old its newest and oldest inputs are. */
export interface AggregatedPrice {
  readonly symbol: string;
  readonly price: number;
  /** Venues whose quotes made the price, sorted. */
  readonly sources: readonly string[];
  /** Newest observation among those venues; the price goes stale from here. */
  readonly observedAt: number;
  /**
   * Oldest input among those venues' quotes and the stablecoin rates that converted them: no
   * part of the price is older. What an attestation signs as its time.
   */
  readonly oldestInputAt: number;
  /** (highest − lowest price of those venues) / price: how far apart the venues were. */
  readonly spread: number;
}

export type UnpricedReason = 'stale' | 'below_quorum' | 'no_agreement';

export type SymbolOutcome =
  | {
      readonly status: 'priced';
      readonly price: AggregatedPrice;
      /** Fresh venues dropped as outliers. */
      readonly rejected: readonly string[];
    }
  | {
      readonly status: 'unpriced';
      readonly reason: UnpricedReason;
      readonly venues: readonly string[];
    };

/** Stablecoins whose USD rate converts the quotes of venues that quote in them. */
export const STABLECOIN_QUOTES = ['USDT', 'USDC'] as const satisfies readonly QuoteCurrency[];
export type StablecoinQuote = (typeof STABLECOIN_QUOTES)[number];

export interface RoundResult {
  readonly outcomes: ReadonlyMap<string, SymbolOutcome>;
  /** USD per stablecoin this round, from USD-quoted venues only; undefined when not agreed. */
  readonly rates: Readonly<Record<StablecoinQuote, number | undefined>>;
  /** Quotes left out because their quote currency had no USD rate this round, per venue. */
  readonly unconverted: ReadonlyMap<string, number>;
}

/** The normal-distribution consistency constant: 1.4826 MAD estimates one standard deviation. */
const MAD_TO_SIGMA = 1.4826;
/** With volume weighting on, no venue weighs more than this many times the median venue. */
const MAX_WEIGHT_RATIO = 2;

/**
 * One refresh round: stablecoin rates from USD venues first, then every USDT/USDC quote is
 * converted with them (or left out, never assumed at 1.0), then each symbol is aggregated:
 * stale quotes out, one vote per venue, a robust outlier cut around the median, and a price
 * only when a quorum and a majority of the fresh venues agree.
 */
export function aggregate(
  quotes: readonly RawQuote[],
  policy: PricingPolicy,
  now: number,
): RoundResult {
  // A venue clock ahead of ours must not keep a quote fresh for longer than it is.
  const valid = quotes
    .filter((quote) => Number.isFinite(quote.price) && quote.price > 0)
    .map((quote) => (quote.observedAt > now ? { ...quote, observedAt: now } : quote));
  const rates = stablecoinRates(valid, policy, now);
  const unconverted = new Map<string, number>();
  const usd: UsdQuote[] = [];
  for (const quote of valid) {
    if (isStablecoinPair(quote)) continue;
    const converted = toUsd(quote, rates);
    if (converted !== undefined) usd.push(converted);
    else unconverted.set(quote.source, (unconverted.get(quote.source) ?? 0) + 1);
  }
  const outcomes = new Map<string, SymbolOutcome>();
  for (const [symbol, symbolQuotes] of groupBySymbol(usd)) {
    outcomes.set(symbol, aggregateSymbol(symbol, symbolQuotes, policy, now));
  }
  return {
    outcomes,
    rates: { USDT: rates.USDT?.price, USDC: rates.USDC?.price },
    unconverted,
  };
}

/** A quote in USD, and its oldest input: its own time, or a converting rate's oldest input. */
type UsdQuote = RawQuote & { readonly oldestInputAt?: number };

function stablecoinRates(
  quotes: readonly RawQuote[],
  policy: PricingPolicy,
  now: number,
): Record<StablecoinQuote, AggregatedPrice | undefined> {
  const rateOf = (coin: StablecoinQuote): AggregatedPrice | undefined => {
    const usdQuotes = quotes.filter((quote) => quote.symbol === coin && quote.quote === 'USD');
    if (usdQuotes.length === 0) return undefined;
    const outcome = aggregateSymbol(coin, usdQuotes, policy, now);
    return outcome.status === 'priced' ? outcome.price : undefined;
  };
  return { USDT: rateOf('USDT'), USDC: rateOf('USDC') };
}

/**
 * A stablecoin quoted in a stablecoin (USDC/USDT): left out on purpose, since a stablecoin is
 * priced from USD venues only and converting through the other's rate would be circular.
 */
function isStablecoinPair(quote: RawQuote): boolean {
  return quote.quote !== 'USD' && (STABLECOIN_QUOTES as readonly string[]).includes(quote.symbol);
}

/** A quote in USD, or undefined when its stablecoin had no agreed rate this round. */
function toUsd(
  quote: RawQuote,
  rates: Record<StablecoinQuote, AggregatedPrice | undefined>,
): UsdQuote | undefined {
  if (quote.quote === 'USD') return quote;
  const rate = rates[quote.quote];
  if (rate === undefined) return undefined;
  return {
    ...quote,
    quote: 'USD',
    price: quote.price * rate.price,
    oldestInputAt: Math.min(quote.observedAt, rate.oldestInputAt),
  };
}

interface VenueQuote {
  readonly source: string;
  readonly price: number;
  readonly observedAt: number;
  /** Oldest input behind this venue's vote. */
  readonly oldestInputAt: number;
  readonly volume: number | undefined;
}

function aggregateSymbol(
  symbol: string,
  quotes: readonly UsdQuote[],
  policy: PricingPolicy,
  now: number,
): SymbolOutcome {
  const venues = [...new Set(quotes.map((quote) => quote.source))].sort();
  const fresh = onePerVenue(currentQuotes(quotes, policy, now));
  if (fresh.length === 0) return { status: 'unpriced', reason: 'stale', venues };
  if (fresh.length < policy.minSources)
    return { status: 'unpriced', reason: 'below_quorum', venues };

  const centre = lowerMedian(fresh.map((quote) => quote.price));
  const tolerance = outlierTolerance(fresh, centre, policy);
  const agreeing = fresh.filter((quote) => Math.abs(quote.price - centre) <= tolerance);
  if (agreeing.length < policy.minSources || agreeing.length * 2 <= fresh.length) {
    return { status: 'unpriced', reason: 'no_agreement', venues };
  }
  const sources = agreeing.map((quote) => quote.source).sort();
  const agreed = agreeing.map((quote) => quote.price);
  const price = policy.volumeWeighted ? volumeWeightedMedian(agreeing) : median(agreed);
  return {
    status: 'priced',
    price: {
      symbol,
      price,
      sources,
      observedAt: Math.max(...agreeing.map((quote) => quote.observedAt)),
      oldestInputAt: Math.min(...agreeing.map((quote) => quote.oldestInputAt)),
      spread: (Math.max(...agreed) - Math.min(...agreed)) / price,
    },
    rejected: fresh
      .map((quote) => quote.source)
      .filter((source) => !sources.includes(source))
      .sort(),
  };
}

/**
 * The quotes that count as current: those at most PRICE_STALE_MS old, and those of push
 * oracles (Chainlink) older than that but within their heartbeat, provided they are within their
 * deviation threshold of the venues current by age (a feed further off should have published
 * again: it is lagging). With no venue current by age there is nothing to hold them against.
 */
function currentQuotes(
  quotes: readonly UsdQuote[],
  policy: PricingPolicy,
  now: number,
): UsdQuote[] {
  const byAge = quotes.filter((quote) => now - quote.observedAt <= policy.staleMs);
  const byRule = quotes.filter(
    (quote) =>
      quote.updateRule !== undefined &&
      now - quote.observedAt > policy.staleMs &&
      now - quote.observedAt <= quote.updateRule.heartbeatMs,
  );
  if (byRule.length === 0 || byAge.length === 0) return byAge;
  const reference = lowerMedian(onePerVenue(byAge).map((quote) => quote.price));
  return [
    ...byAge,
    ...byRule.filter(
      (quote) =>
        Math.abs(quote.price - reference) <= (quote.updateRule?.deviation ?? 0) * reference,
    ),
  ];
}

/**
 * How far from the median a venue may be: a multiple of the venues' own robust spread (MAD),
 * but never narrower than the floor (identical venues would otherwise reject any difference)
 * and never wider than the ceiling (a scattered field must not let anything through).
 */
export function outlierTolerance(
  quotes: readonly { price: number }[],
  centre: number,
  policy: PricingPolicy,
): number {
  const mad = median(quotes.map((quote) => Math.abs(quote.price - centre)));
  const spread = policy.madMultiplier * MAD_TO_SIGMA * mad;
  return Math.min(Math.max(spread, policy.outlierFloor * centre), policy.maxDeviation * centre);
}

function groupBySymbol(quotes: readonly UsdQuote[]): Map<string, UsdQuote[]> {
  const groups = new Map<string, UsdQuote[]>();
  for (const quote of quotes) {
    const group = groups.get(quote.symbol);
    if (group === undefined) groups.set(quote.symbol, [quote]);
    else group.push(quote);
  }
  return groups;
}

/**
 * A venue listing one asset several times (twice, or in USDT and USDC) still casts one vote:
 * the median of its own quotes, its newest observation, its oldest input, its summed volume.
 */
function onePerVenue(quotes: readonly UsdQuote[]): VenueQuote[] {
  const bySource = new Map<string, UsdQuote[]>();
  for (const quote of quotes)
    bySource.set(quote.source, [...(bySource.get(quote.source) ?? []), quote]);
  return [...bySource].map(([source, own]) => ({
    source,
    price: median(own.map((quote) => quote.price)),
    observedAt: Math.max(...own.map((quote) => quote.observedAt)),
    oldestInputAt: Math.min(...own.map((quote) => quote.oldestInputAt ?? quote.observedAt)),
    volume: own.every((quote) => quote.volume !== undefined)
      ? own.reduce((sum, quote) => sum + (quote.volume ?? 0), 0)
      : undefined,
  }));
}

/**
 * Volume-weighted median of agreeing venues, each weight capped at twice the median weight so
 * one large venue cannot decide alone; the plain median when any venue lacks a volume.
 */
export function volumeWeightedMedian(
  quotes: readonly Pick<VenueQuote, 'price' | 'volume'>[],
): number {
  const prices = quotes.map((quote) => quote.price);
  if (quotes.some((quote) => quote.volume === undefined || quote.volume <= 0))
    return median(prices);
  const cap = MAX_WEIGHT_RATIO * median(quotes.map((quote) => quote.volume ?? 0));
  const weighted = quotes
    .map((quote) => ({ price: quote.price, weight: Math.min(quote.volume ?? 0, cap) }))
    .sort((a, b) => a.price - b.price);
  const half = weighted.reduce((sum, entry) => sum + entry.weight, 0) / 2;
  let cumulative = 0;
  for (const [index, entry] of weighted.entries()) {
    cumulative += entry.weight;
    if (cumulative > half) return entry.price;
    if (cumulative === half) return (entry.price + (weighted[index + 1]?.price ?? entry.price)) / 2;
  }
  return median(prices);
}

/**
 * The centre outliers are measured from: a price a venue actually quoted (the lower of the two
 * middle values for an even count). With two venues the tolerance is then their own gap, so two
 * venues further apart than the tolerance give no price.
 */
export function lowerMedian(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty list');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(sorted.length / 2) - 1] as number;
}

/** Median of a non-empty list: the middle value, or the mean of the two middle values. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty list');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const upper = sorted[middle] as number;
  return sorted.length % 2 === 1 ? upper : ((sorted[middle - 1] as number) + upper) / 2;
}
