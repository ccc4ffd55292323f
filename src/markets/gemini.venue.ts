import { splitBySuffix } from './instrument-names.js';
import type { VenueQuote } from './price-source.js';
import type { JsonVenue } from './venue-definition.js';
import { expectArray, isRecord, parsePrice } from './venue-json.js';

/**
 * Only USD is stripped. Names alone cannot tell PAXG/USD (`PAXGUSD`) from BTC/GUSD (`BTCGUSD`):
 * reading the latter as an unknown asset `BTCG` is harmless, dropping PAXG would not be.
 */
const GEMINI_QUOTES = ['USD'] as const;

/** Gemini's price feed: the last price of every pair in one call, without volumes or times. */
export const GEMINI: JsonVenue = {
  id: 'gemini',
  summary: 'USD pairs (`BTCUSD`); no volume or time in this feed',
  defaultBaseUrl: 'https://api.gemini.com',
  path: '/v1/pricefeed',
  // public limit 120 req/min, and Gemini asks for at most 1 req/s: half the limit
  minIntervalMs: 1000,
  parse: parseGeminiPriceFeed,
};

export function parseGeminiPriceFeed(body: unknown, receivedAt: number): VenueQuote[] {
  const quotes: VenueQuote[] = [];
  for (const row of expectArray(body, 'body')) {
    if (!isRecord(row) || typeof row.pair !== 'string') continue;
    const instrument = splitBySuffix(row.pair, GEMINI_QUOTES);
    if (instrument === undefined) continue;
    const price = parsePrice(row.price);
    if (price === undefined) continue;
    quotes.push({
      symbol: instrument.base,
      quote: 'USD',
      price,
      observedAt: receivedAt,
    });
  }
  return quotes;
}
