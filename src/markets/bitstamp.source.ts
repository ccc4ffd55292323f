import type { PriceSource, RawQuote } from './price-source.js';
import type { VenueConnection } from './venue-connection.js';
import { expectArray, isRecord, parseAmount, parseEpoch, parsePrice } from './venue-json.js';

export const BITSTAMP_TICKERS_PATH = '/api/v2/ticker/';

/** Bitstamp's all-pairs ticker. */
export class BitstampSource implements PriceSource {
  readonly id = 'bitstamp';

  constructor(private readonly venue: VenueConnection) {}

  async fetchQuotes(): Promise<RawQuote[]> {
    const body = await this.venue.getJson(BITSTAMP_TICKERS_PATH);
    return parseBitstampTickers(body, this.venue.now());
  }
}

export function parseBitstampTickers(body: unknown, receivedAt: number): RawQuote[] {
  const quotes: RawQuote[] = [];
  for (const ticker of expectArray(body, 'body')) {
    if (!isRecord(ticker) || typeof ticker.pair !== 'string') continue;
    const [base, quote] = ticker.pair.split('/');
    if (base === undefined || base === '' || quote !== 'USD') continue;
    const price = parsePrice(ticker.last);
    if (price === undefined) continue;
    const observedAt = parseEpoch(ticker.timestamp, 's') ?? receivedAt;
    quotes.push({
      source: 'bitstamp',
      symbol: base.toUpperCase(),
      quote: 'USD',
      price,
      volume: parseAmount(ticker.volume),
      observedAt: Math.min(observedAt, receivedAt),
    });
  }
  return quotes;
}
