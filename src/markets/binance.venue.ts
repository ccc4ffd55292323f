import { splitBySuffix } from './instrument-names.js';
import type { VenueQuote } from './price-source.js';
import { BINANCE_STREAM } from './binance.stream.js';
import type { JsonVenue } from './venue-definition.js';
import { expectArray, isRecord, parsePrice } from './venue-json.js';

/** Binance quotes in stablecoins; FDUSD, TRY, EUR and crypto quotes are left out. */
const BINANCE_QUOTES = ['USDT', 'USDC'] as const;

/** Binance spot: the last price of every symbol in one call (weight 4), without volumes or times. */
export const BINANCE: JsonVenue = {
  id: 'binance',
  summary:
    'USDT and USDC symbols (`BTCUSDT`); FDUSD, fiat and crypto quotes skipped; no volume or time. Answers 451 to US addresses',
  defaultBaseUrl: 'https://api.binance.com',
  path: '/api/v3/ticker/price',
  // all symbols cost weight 4 of 6000/min per IP: 240/min is 4 %, far from a 429 or 418 ban
  minIntervalMs: 1000,
  stream: { defaultUrl: 'wss://stream.binance.com:9443', protocol: BINANCE_STREAM },
  parse: parseBinanceTickerPrices,
};

export function parseBinanceTickerPrices(body: unknown, receivedAt: number): VenueQuote[] {
  const quotes: VenueQuote[] = [];
  for (const ticker of expectArray(body, 'body')) {
    if (!isRecord(ticker) || typeof ticker.symbol !== 'string') continue;
    const instrument = splitBySuffix(ticker.symbol, BINANCE_QUOTES);
    if (instrument === undefined) continue;
    const price = parsePrice(ticker.price);
    if (price === undefined) continue;
    quotes.push({
      symbol: instrument.base,
      quote: instrument.quote,
      price,
      observedAt: receivedAt,
    });
  }
  return quotes;
}
