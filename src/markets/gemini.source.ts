import { splitBySuffix } from './instrument-names.js';
import type { PriceSource, RawQuote } from './price-source.js';
import type { VenueConnection } from './venue-connection.js';
import { expectArray, isRecord, parsePrice } from './venue-json.js';

export const GEMINI_PRICEFEED_PATH = '/v1/pricefeed';

/**
 * Only USD is stripped. Names alone cannot tell PAXG/USD (`PAXGUSD`) from BTC/GUSD (`BTCGUSD`):
 * reading the latter as an unknown asset `BTCG` is harmless, dropping PAXG would not be.
 */
const GEMINI_QUOTES = ['USD'] as const;

/** Gemini's price feed: the last price of every pair in one call, without volumes or times. */
export class GeminiSource implements PriceSource {
  readonly id = 'gemini';

  constructor(private readonly venue: VenueConnection) {}

  async fetchQuotes(): Promise<RawQuote[]> {
    const body = await this.venue.getJson(GEMINI_PRICEFEED_PATH);
    return parseGeminiPriceFeed(body, this.venue.now());
  }
}

export function parseGeminiPriceFeed(body: unknown, receivedAt: number): RawQuote[] {
  const quotes: RawQuote[] = [];
  for (const row of expectArray(body, 'body')) {
    if (!isRecord(row) || typeof row.pair !== 'string') continue;
    const instrument = splitBySuffix(row.pair, GEMINI_QUOTES);
    if (instrument === undefined) continue;
    const price = parsePrice(row.price);
    if (price === undefined) continue;
    quotes.push({
      source: 'gemini',
      symbol: instrument.base,
      quote: 'USD',
      price,
      observedAt: receivedAt,
    });
  }
  return quotes;
}
