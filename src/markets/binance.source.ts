import { splitBySuffix } from './instrument-names.js';
import type { PriceSource, RawQuote } from './price-source.js';
import type { VenueConnection } from './venue-connection.js';
import { expectArray, isRecord, parsePrice } from './venue-json.js';

export const BINANCE_TICKER_PRICE_PATH = '/api/v3/ticker/price';

/** Binance quotes in stablecoins; FDUSD, TRY, EUR and crypto quotes are left out. */
const BINANCE_QUOTES = ['USDT', 'USDC'] as const;

/** Binance spot: the last price of every symbol in one call (weight 4), without volumes or times. */
export class BinanceSource implements PriceSource {
  readonly id = 'binance';

  constructor(private readonly venue: VenueConnection) {}

  async fetchQuotes(): Promise<RawQuote[]> {
    const body = await this.venue.getJson(BINANCE_TICKER_PRICE_PATH);
    return parseBinanceTickerPrices(body, this.venue.now());
  }
}

export function parseBinanceTickerPrices(body: unknown, receivedAt: number): RawQuote[] {
  const quotes: RawQuote[] = [];
  for (const ticker of expectArray(body, 'body')) {
    if (!isRecord(ticker) || typeof ticker.symbol !== 'string') continue;
    const instrument = splitBySuffix(ticker.symbol, BINANCE_QUOTES);
    if (instrument === undefined) continue;
    const price = parsePrice(ticker.price);
    if (price === undefined) continue;
    quotes.push({
      source: 'binance',
      symbol: instrument.base,
      quote: instrument.quote,
      price,
      observedAt: receivedAt,
    });
  }
  return quotes;
}
