import type { QuoteCurrency } from '../markets/price-source.js';
import type { VenueConnection } from '../markets/venue-connection.js';

/**
 * One market's 24-hour statistics as its venue reports them, in the market's quote currency.
 * Every figure is rolling 24 h; a figure the venue does not report (or reports over another
 * window, such as Kraken's open since midnight UTC) is absent, never 0.
 */
export interface MarketStats {
  /** Base asset in the catalogue's naming. */
  readonly symbol: string;
  readonly quote: QuoteCurrency;
  /** Last traded price: the figure the outlier rule holds venues against. */
  readonly last: number;
  readonly open?: number;
  readonly high?: number;
  readonly low?: number;
  /** Traded in the last 24 h, in the base asset. */
  readonly volume?: number;
  /** Traded in the last 24 h, in the quote currency. */
  readonly quoteVolume?: number;
  /** Market capitalisation in USD, from a source that reports one (CoinGecko). */
  readonly marketCapUsd?: number;
  /** Epoch milliseconds when the venue computed them (or when we received them). */
  readonly observedAt: number;
}

/** Reads one venue's statistics for every market it lists. */
export interface StatsFetcher {
  fetchStats(): Promise<MarketStats[]>;
}

/** How a venue's 24-hour statistics are read: its requests (and their fixtures), its pace. */
export interface StatsVenue {
  /** The venue's id in MARKETS: its base URL, API key and enabling are the prices' own. */
  readonly id: string;
  /** Every path requested, by fixture name (test/fixtures/markets/<fixture>.json replays it). */
  readonly requests: readonly { readonly path: string; readonly fixture: string }[];
  /** Shortest time between two reads, within the venue's public rate limit. */
  readonly minIntervalMs: number;
  /** A market-cap source, not a venue: it adds market caps and no 24 h trading figure. */
  readonly marketCapOnly?: boolean;
  create(connection: VenueConnection): StatsFetcher;
}

/** A venue read with one GET: its path and a pure parser. */
export function singleRequestVenue(
  venue: Omit<StatsVenue, 'requests' | 'create'> & {
    readonly path: string;
    readonly fixture: string;
    readonly parse: (body: unknown, receivedAt: number) => MarketStats[];
  },
): StatsVenue {
  const { path, fixture, parse, ...rest } = venue;
  return {
    ...rest,
    requests: [{ path, fixture }],
    create: (connection) => ({
      fetchStats: async () => parse(await connection.getJson(path), connection.now()),
    }),
  };
}
