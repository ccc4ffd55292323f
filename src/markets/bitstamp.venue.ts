import type { VenueQuote } from './price-source.js';
import type { JsonVenue } from './venue-definition.js';
import { expectArray, isRecord, parseAmount, parseEpoch, parsePrice } from './venue-json.js';

/** Bitstamp's all-pairs ticker. */
export const BITSTAMP: JsonVenue = {
  id: 'bitstamp',
  summary: 'USD pairs, dated by the venue',
  defaultBaseUrl: 'https://www.bitstamp.net',
  path: '/api/v2/ticker/',
  minIntervalMs: 1000,
  parse: parseBitstampTickers,
};

export function parseBitstampTickers(body: unknown, receivedAt: number): VenueQuote[] {
  const quotes: VenueQuote[] = [];
  for (const ticker of expectArray(body, 'body')) {
    if (!isRecord(ticker) || typeof ticker.pair !== 'string') continue;
    const [base, quote] = ticker.pair.split('/');
    if (base === undefined || base === '' || quote !== 'USD') continue;
    const price = parsePrice(ticker.last);
    if (price === undefined) continue;
    const observedAt = parseEpoch(ticker.timestamp, 's') ?? receivedAt;
    quotes.push({
      symbol: base.toUpperCase(),
      quote: 'USD',
      price,
      volume: parseAmount(ticker.volume),
      observedAt: Math.min(observedAt, receivedAt),
    });
  }
  return quotes;
}
