import { splitBySuffix } from './instrument-names.js';
import type { VenueQuote } from './price-source.js';
import { BYBIT_STREAM } from './bybit.stream.js';
import type { JsonVenue } from './venue-definition.js';
import { venueReportedError } from './venue-error.js';
import {
  expectArray,
  expectRecord,
  isRecord,
  parseAmount,
  parseEpoch,
  parsePrice,
} from './venue-json.js';

const BYBIT_QUOTES = ['USDT', 'USDC'] as const;

/** Bybit spot tickers: every spot symbol with its last price and 24 h volume, one server time. */
export const BYBIT: JsonVenue = {
  id: 'bybit',
  summary:
    'USDT and USDC symbols, dated by the response `time`; a `retCode` other than `0` is a failure. Answers 403 to US addresses',
  defaultBaseUrl: 'https://api.bybit.com',
  path: '/v5/market/tickers?category=spot',
  // 600 req/5 s per IP, but going over earns a 403 ban of 10+ minutes: 1 req/s stays far below
  minIntervalMs: 1000,
  stream: { defaultUrl: 'wss://stream.bybit.com', protocol: BYBIT_STREAM },
  parse: parseBybitTickers,
};

export function parseBybitTickers(body: unknown, receivedAt: number): VenueQuote[] {
  const envelope = bybitEnvelope(body);
  const tickers = expectArray(expectRecord(envelope.result, 'result').list, 'list');
  const observedAt = Math.min(parseEpoch(envelope.time, 'ms') ?? receivedAt, receivedAt);
  const quotes: VenueQuote[] = [];
  for (const ticker of tickers) {
    if (!isRecord(ticker) || typeof ticker.symbol !== 'string') continue;
    const instrument = splitBySuffix(ticker.symbol, BYBIT_QUOTES);
    if (instrument === undefined) continue;
    const price = parsePrice(ticker.lastPrice);
    if (price === undefined) continue;
    quotes.push({
      symbol: instrument.base,
      quote: instrument.quote,
      price,
      volume: parseAmount(ticker.volume24h),
      observedAt,
    });
  }
  return quotes;
}

/** Bybit answers errors with HTTP 200 and a `retCode` other than 0. */
function bybitEnvelope(body: unknown): Record<string, unknown> {
  const envelope = expectRecord(body, 'body');
  if (envelope.retCode !== 0) throw venueReportedError('Bybit', envelope.retCode, envelope.retMsg);
  return envelope;
}
