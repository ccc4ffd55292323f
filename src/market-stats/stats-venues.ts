import { BINANCE_STATS, BYBIT_STATS, KUCOIN_STATS, OKX_STATS } from './exchange-stats.js';
import {
  BITSTAMP_STATS,
  COINBASE_STATS,
  COINGECKO_MARKET_CAPS,
  GEMINI_STATS,
  KRAKEN_STATS,
} from './usd-venue-stats.js';
import type { StatsVenue } from './venue-stats.js';

/** How each built-in venue's 24-hour statistics are read; a venue in MARKETS is read for both. */
export const STATS_VENUES: readonly StatsVenue[] = [
  COINBASE_STATS,
  KRAKEN_STATS,
  BITSTAMP_STATS,
  GEMINI_STATS,
  BINANCE_STATS,
  OKX_STATS,
  BYBIT_STATS,
  KUCOIN_STATS,
  COINGECKO_MARKET_CAPS,
];

/** The statistics of the venue with this id, if it has any. */
export function statsVenue(id: string): StatsVenue | undefined {
  return STATS_VENUES.find((venue) => venue.id === id);
}
