import {
  STABLECOIN_QUOTES,
  lowerMedian,
  median,
  outlierTolerance,
  type PricingPolicy,
  type StablecoinQuote,
} from '../aggregation/aggregate.js';
import type { MarketStats } from './venue-stats.js';

/** One symbol's 24-hour figures across venues; null where no venue reports one agreed on. */
export interface Figures24h {
  readonly open24h: number | null;
  readonly high24h: number | null;
  readonly low24h: number | null;
  /** Traded in the last 24 h, in the asset, summed over the agreeing venues. */
  readonly volume24h: number | null;
  /** Traded in the last 24 h, in USD, summed over the agreeing venues that report it. */
  readonly volumeUsd24h: number | null;
  /** Venues whose statistics made these figures. */
  readonly venues: number;
}

/** What the figures are made with: the pricing policy, the stablecoins' USD rates, the clock. */
export interface FiguresContext {
  readonly policy: PricingPolicy;
  readonly rates: Readonly<Record<StablecoinQuote, number | undefined>>;
  /** A venue's statistics observed longer ago than this are left out. */
  readonly staleMs: number;
  readonly now: number;
}

/** One venue's figures for one symbol, in USD: its markets (USD, USDT, USDC) taken together. */
export interface VenueFigures {
  readonly venue: string;
  readonly price: number;
  readonly open?: number;
  readonly high?: number;
  readonly low?: number;
  readonly volume?: number;
  readonly volumeUsd?: number;
}

const NO_FIGURES: Figures24h = {
  open24h: null,
  high24h: null,
  low24h: null,
  volume24h: null,
  volumeUsd24h: null,
  venues: 0,
};

/**
 * The 24-hour figures of one symbol from each venue's markets of it (by venue id). The venues
 * are held against each other as prices are: stale readings out, one vote per venue, venues
 * whose last price is an outlier (the prices' MAD rule) out, and figures only when a quorum and
 * a majority agree. Open, high and low are then medians, each with the same outlier cut, so no
 * single venue can set one; volumes are the agreeing venues' sums.
 */
export function figures24h(
  symbol: string,
  markets: ReadonlyMap<string, readonly MarketStats[]>,
  context: FiguresContext,
): Figures24h {
  const { policy } = context;
  const fresh = [...markets].flatMap(([venue, own]) => {
    const current = own.filter((stats) => context.now - stats.observedAt <= context.staleMs);
    const figures = venueFigures(venue, symbol, current, context.rates);
    return figures === undefined ? [] : [figures];
  });
  if (fresh.length < policy.minSources) return NO_FIGURES;
  const centre = lowerMedian(fresh.map((venue) => venue.price));
  const tolerance = outlierTolerance(fresh, centre, policy);
  const agreeing = fresh.filter((venue) => Math.abs(venue.price - centre) <= tolerance);
  if (agreeing.length < policy.minSources || agreeing.length * 2 <= fresh.length) return NO_FIGURES;
  return {
    open24h: robustMedian(
      agreeing.map((venue) => venue.open),
      policy,
    ),
    high24h: robustMedian(
      agreeing.map((venue) => venue.high),
      policy,
    ),
    low24h: robustMedian(
      agreeing.map((venue) => venue.low),
      policy,
    ),
    volume24h: sumOf(agreeing.map((venue) => venue.volume)),
    volumeUsd24h: sumOf(agreeing.map((venue) => venue.volumeUsd)),
    venues: agreeing.length,
  };
}

/**
 * A venue's figures in USD: each market once (the first listed per quote currency), USDT and
 * USDC markets converted at the round's rate (left out without one, never assumed at 1.0), a
 * stablecoin quoted in a stablecoin left out; prices the median of its markets, volumes summed.
 */
export function venueFigures(
  venue: string,
  symbol: string,
  markets: readonly MarketStats[],
  rates: Readonly<Record<StablecoinQuote, number | undefined>>,
): VenueFigures | undefined {
  const stablecoin = (STABLECOIN_QUOTES as readonly string[]).includes(symbol);
  const byQuote = new Map<string, { stats: MarketStats; rate: number }>();
  for (const stats of markets) {
    if (stats.symbol !== symbol || byQuote.has(stats.quote)) continue;
    if (stats.quote !== 'USD' && stablecoin) continue;
    const rate = stats.quote === 'USD' ? 1 : rates[stats.quote];
    if (rate !== undefined) byQuote.set(stats.quote, { stats: consistent(stats), rate });
  }
  const own = [...byQuote.values()];
  if (own.length === 0) return undefined;
  const inUsd = (pick: (stats: MarketStats) => number | undefined): number[] =>
    own.flatMap(({ stats, rate }) => {
      const value = pick(stats);
      return value === undefined ? [] : [value * rate];
    });
  const medianOrAbsent = (values: number[]): number | undefined =>
    values.length === 0 ? undefined : median(values);
  const sumOrAbsent = (values: number[]): number | undefined =>
    values.length === 0 ? undefined : values.reduce((sum, value) => sum + value, 0);
  return withDefined({
    venue,
    price: median(inUsd((stats) => stats.last)),
    open: medianOrAbsent(inUsd((stats) => stats.open)),
    high: medianOrAbsent(inUsd((stats) => stats.high)),
    low: medianOrAbsent(inUsd((stats) => stats.low)),
    volume: sumOrAbsent(
      own.flatMap(({ stats }) => (stats.volume === undefined ? [] : [stats.volume])),
    ),
    volumeUsd: sumOrAbsent(inUsd((stats) => stats.quoteVolume)),
  });
}

/** A market whose low is above its high contradicts itself: neither is believed. */
function consistent(stats: MarketStats): MarketStats {
  if (stats.high === undefined || stats.low === undefined || stats.low <= stats.high) return stats;
  return { ...stats, high: undefined, low: undefined };
}

/**
 * The median of the values reported, after the prices' outlier cut around their lower median;
 * null when fewer than the quorum report one or the survivors are not a majority.
 */
export function robustMedian(
  values: readonly (number | undefined)[],
  policy: FiguresContext['policy'],
): number | null {
  const reported = values.filter((value): value is number => value !== undefined);
  if (reported.length < policy.minSources) return null;
  const centre = lowerMedian(reported);
  const tolerance = outlierTolerance(
    reported.map((price) => ({ price })),
    centre,
    policy,
  );
  const kept = reported.filter((value) => Math.abs(value - centre) <= tolerance);
  if (kept.length < policy.minSources || kept.length * 2 <= reported.length) return null;
  return median(kept);
}

function sumOf(values: readonly (number | undefined)[]): number | null {
  const reported = values.filter((value): value is number => value !== undefined);
  return reported.length === 0 ? null : reported.reduce((sum, value) => sum + value, 0);
}

function withDefined(figures: VenueFigures & Record<string, unknown>): VenueFigures {
  return Object.fromEntries(
    Object.entries(figures).filter(([, value]) => value !== undefined),
  ) as unknown as VenueFigures;
}

/**
 * The market cap a cap source reports, when its own USD price in the same reading is within the
 * prices' widest tolerance of the served price (a cap is price × supply: a source off by ×10 in
 * price is off by ×10 in cap); with several sources, their median. Null otherwise: never estimated.
 */
export function marketCapOf(
  readings: readonly MarketStats[],
  price: number,
  context: FiguresContext,
): number | null {
  const caps = readings.flatMap((stats) => {
    const fresh = context.now - stats.observedAt <= context.staleMs;
    const agrees = Math.abs(stats.last - price) <= context.policy.maxDeviation * price;
    return fresh && agrees && stats.marketCapUsd !== undefined ? [stats.marketCapUsd] : [];
  });
  return caps.length === 0 ? null : median(caps);
}
