import { COINGECKO_IDS } from './coingecko-ids.js';
import type { VenueQuote } from './price-source.js';
import type { JsonVenue } from './venue-definition.js';
import { expectRecord, isRecord, parseEpoch, parsePrice } from './venue-json.js';

/** Our symbol for each CoinGecko id. */
const SYMBOLS_BY_ID: ReadonlyMap<string, string> = new Map(
  Object.entries(COINGECKO_IDS).map(([symbol, id]) => [id, symbol]),
);

/** The simple-price request for `ids` (every mapped asset by default), in USD with update times. */
export function coingeckoPricePath(ids: readonly string[] = Object.values(COINGECKO_IDS)): string {
  return `/api/v3/simple/price?ids=${ids.join(',')}&vs_currencies=usd&include_last_updated_at=true`;
}

/**
 * CoinGecko simple prices: USD for every mapped asset in one call, each with its update time.
 * CoinGecko is an aggregator itself, so its vote already blends venues we also ask.
 */
export const COINGECKO: JsonVenue = {
  id: 'coingecko',
  summary:
    'USD price per asset (ids from `src/markets/coingecko-ids.ts`), dated by `last_updated_at`; CoinGecko is itself an aggregator of venues',
  defaultBaseUrl: 'https://api.coingecko.com',
  path: coingeckoPricePath(),
  // keyless callers get a few calls a minute and prices are cached ~60 s upstream anyway
  minIntervalMs: 60_000,
  apiKeyHeader: 'x-cg-demo-api-key',
  parse: parseCoingeckoPrices,
};

export function parseCoingeckoPrices(body: unknown, receivedAt: number): VenueQuote[] {
  const quotes: VenueQuote[] = [];
  for (const [id, entry] of Object.entries(expectRecord(body, 'body'))) {
    const symbol = SYMBOLS_BY_ID.get(id);
    if (symbol === undefined || !isRecord(entry)) continue;
    const price = parsePrice(entry.usd);
    if (price === undefined) continue;
    const observedAt = parseEpoch(entry.last_updated_at, 's') ?? receivedAt;
    quotes.push({
      symbol,
      quote: 'USD',
      price,
      observedAt: Math.min(observedAt, receivedAt),
    });
  }
  return quotes;
}
