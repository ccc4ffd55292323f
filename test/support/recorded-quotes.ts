import type { RawQuote } from '../../src/markets/price-source.js';
import { parseKrakenAssetPairs, parseKrakenTicker } from '../../src/markets/kraken.venue.js';
import { BUILT_IN_VENUES } from '../../src/markets/venues.js';
import { STABLECOIN_QUOTES } from '../../src/aggregation/aggregate.js';
import { loadFixture } from './fixtures.js';

/** Every built-in venue's recorded snapshot, through its own parser, stamped with its id. */
export function recordedQuotes(receivedAt = Date.now()): RawQuote[] {
  return BUILT_IN_VENUES.flatMap((venue) => {
    const quotes =
      'parse' in venue
        ? venue.parse(loadFixture(venue.id), receivedAt)
        : parseKrakenTicker(
            loadFixture('kraken-ticker'),
            parseKrakenAssetPairs(loadFixture('kraken-assetpairs')),
            receivedAt,
          );
    return quotes.map((quote) => ({ ...quote, source: venue.id }));
  });
}

/**
 * Venues whose recorded quotes can price each symbol: USD quotes, and USDT/USDC quotes except
 * for the stablecoins themselves (priced from USD venues only).
 */
export function pricingVenuesBySymbol(quotes: readonly RawQuote[]): Map<string, Set<string>> {
  const venues = new Map<string, Set<string>>();
  for (const quote of quotes) {
    const stablecoin = (STABLECOIN_QUOTES as readonly string[]).includes(quote.symbol);
    if (quote.quote !== 'USD' && stablecoin) continue;
    venues.set(quote.symbol, (venues.get(quote.symbol) ?? new Set()).add(quote.source));
  }
  return venues;
}
