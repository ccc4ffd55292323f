import { BitstampSource } from './bitstamp.source.js';
import { CoinbaseSource } from './coinbase.source.js';
import { KrakenSource } from './kraken.source.js';
import type { PriceSource } from './price-source.js';
import type { VenueConnection } from './venue-connection.js';

/** A built-in venue: its id, its real scheme + host, how often it may be asked, and its source. */
export interface VenueDefinition {
  readonly id: string;
  readonly defaultBaseUrl: string;
  /** Shortest time between two snapshots from this venue, within its public rate limit with margin. */
  readonly minIntervalMs: number;
  create(connection: VenueConnection): PriceSource;
}

/** Registration of every built-in venue; adding a venue is one line here. */
export const BUILT_IN_VENUES: readonly VenueDefinition[] = [
  {
    id: 'coinbase',
    defaultBaseUrl: 'https://api.coinbase.com',
    minIntervalMs: 1000,
    create: (c) => new CoinbaseSource(c),
  },
  {
    id: 'kraken',
    defaultBaseUrl: 'https://api.kraken.com',
    minIntervalMs: 2000,
    create: (c) => new KrakenSource(c),
  },
  {
    id: 'bitstamp',
    defaultBaseUrl: 'https://www.bitstamp.net',
    minIntervalMs: 1000,
    create: (c) => new BitstampSource(c),
  },
];

export const BUILT_IN_VENUE_IDS: readonly string[] = BUILT_IN_VENUES.map((venue) => venue.id);
