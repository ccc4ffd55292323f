import { isQuoteCurrency, splitDashed } from './instrument-names.js';
import type { VenueQuote } from './price-source.js';
import { OKX_STREAM } from './okx.stream.js';
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

/** OKX spot tickers: every spot instrument with its last price, 24 h volume and time. */
export const OKX: JsonVenue = {
  id: 'okx',
  summary:
    'USD, USDT and USDC instruments (`BTC-USDT`), dated by each ticker\'s `ts`; a `code` other than `"0"` is a failure',
  defaultBaseUrl: 'https://www.okx.com',
  path: '/api/v5/market/tickers?instType=SPOT',
  // tickers allow 20 req/2 s per IP: 1 req/s is a twentieth of that
  minIntervalMs: 1000,
  stream: { defaultUrl: 'wss://ws.okx.com:8443', protocol: OKX_STREAM },
  parse: parseOkxTickers,
};

export function parseOkxTickers(body: unknown, receivedAt: number): VenueQuote[] {
  const quotes: VenueQuote[] = [];
  for (const ticker of okxData(body)) {
    if (!isRecord(ticker) || typeof ticker.instId !== 'string') continue;
    const instrument = splitDashed(ticker.instId);
    if (instrument === undefined || !isQuoteCurrency(instrument.quote)) continue;
    const price = parsePrice(ticker.last);
    if (price === undefined) continue;
    const observedAt = parseEpoch(ticker.ts, 'ms') ?? receivedAt;
    quotes.push({
      symbol: instrument.base,
      quote: instrument.quote,
      price,
      volume: parseAmount(ticker.vol24h),
      observedAt: Math.min(observedAt, receivedAt),
    });
  }
  return quotes;
}

/** OKX answers errors with HTTP 200 and a `code` other than "0". */
function okxData(body: unknown): unknown[] {
  const envelope = expectRecord(body, 'body');
  if (envelope.code !== '0') throw venueReportedError('OKX', envelope.code, envelope.msg);
  return expectArray(envelope.data, 'data');
}
