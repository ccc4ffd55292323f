import { BINANCE } from './binance.venue.js';
import { BITSTAMP } from './bitstamp.venue.js';
import { BYBIT } from './bybit.venue.js';
import { COINBASE } from './coinbase.venue.js';
import { COINGECKO } from './coingecko.venue.js';
import { GEMINI } from './gemini.venue.js';
import { KRAKEN } from './kraken.venue.js';
import { KUCOIN } from './kucoin.venue.js';
import { OKX } from './okx.venue.js';
import type { VenueDefinition } from './venue-definition.js';

/**
 * Every built-in venue, in the default MARKETS order. Each is defined in its own
 * `<id>.venue.ts` (id, base URL, path, minimum interval, parser); adding a venue is one line here.
 */
export const BUILT_IN_VENUES: readonly VenueDefinition[] = [
  COINBASE,
  KRAKEN,
  BITSTAMP,
  GEMINI,
  BINANCE,
  OKX,
  BYBIT,
  KUCOIN,
  COINGECKO,
];

export const BUILT_IN_VENUE_IDS: readonly string[] = BUILT_IN_VENUES.map((venue) => venue.id);

/** Venues with a ticker stream (MARKET_STREAMS picks among them). */
export const STREAMING_VENUE_IDS: readonly string[] = BUILT_IN_VENUES.filter(
  (venue) => venue.stream !== undefined,
).map((venue) => venue.id);

/** The built-in venue with this id. */
export function builtInVenue(id: string): VenueDefinition {
  const venue = BUILT_IN_VENUES.find((candidate) => candidate.id === id);
  if (venue === undefined) throw new Error(`No built-in venue "${id}"`);
  return venue;
}
