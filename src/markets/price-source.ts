import type { StreamEndpoint } from './price-stream.js';

/** Currencies a venue may quote an asset in; USDT and USDC are converted to USD downstream. */
export type QuoteCurrency = 'USD' | 'USDT' | 'USDC';

/** One venue's observation of one instrument, already in our symbol naming. */
export interface RawQuote extends VenueQuote {
  /** The id of the venue that observed it. */
  readonly source: string;
}

/** An observation as a venue parser reads it; the source adds its venue's id (`RawQuote`). */
export interface VenueQuote {
  /** Base asset in the catalogue's naming (`BTC`, not `XBT`). */
  readonly symbol: string;
  readonly quote: QuoteCurrency;
  /** Last traded price in units of `quote`; finite and positive. */
  readonly price: number;
  /** 24 h traded volume in base units, when the venue reports it. */
  readonly volume?: number;
  /** Epoch milliseconds when the venue observed the price (or when we received it). */
  readonly observedAt: number;
  /**
   * For a source that publishes only on change (a push oracle such as a Chainlink feed): it
   * publishes at least every `heartbeatMs` and whenever the price moves by more than `deviation`
   * (a fraction), so an answer older than PRICE_STALE_MS is still current within that rule.
   */
  readonly updateRule?: UpdateRule;
}

export interface UpdateRule {
  readonly heartbeatMs: number;
  readonly deviation: number;
}

/** A market venue that can report many instruments in one call. */
export interface PriceSource {
  readonly id: string;
  /** Shortest time between two calls, within the venue's rate limit; every round when absent. */
  readonly minIntervalMs?: number;
  /** Its ticker stream, when used; the calls above are then the fallback while it is down. */
  readonly stream?: StreamEndpoint;
  fetchQuotes(): Promise<RawQuote[]>;
}

/** Multi-provider token: every enabled PriceSource, in MARKETS order. */
export const PRICE_SOURCES = Symbol('PriceSources');
