import { isQuoteCurrency, splitDashed } from './instrument-names.js';
import type { PriceSource, RawQuote } from './price-source.js';
import type { VenueConnection } from './venue-connection.js';
import { venueReportedError } from './venue-error.js';
import {
  expectArray,
  expectRecord,
  isRecord,
  parseAmount,
  parseEpoch,
  parsePrice,
} from './venue-json.js';

export const OKX_SPOT_TICKERS_PATH = '/api/v5/market/tickers?instType=SPOT';

/** OKX spot tickers: every spot instrument with its last price, 24 h volume and time. */
export class OkxSource implements PriceSource {
  readonly id = 'okx';

  constructor(private readonly venue: VenueConnection) {}

  async fetchQuotes(): Promise<RawQuote[]> {
    const body = await this.venue.getJson(OKX_SPOT_TICKERS_PATH);
    return parseOkxTickers(body, this.venue.now());
  }
}

export function parseOkxTickers(body: unknown, receivedAt: number): RawQuote[] {
  const quotes: RawQuote[] = [];
  for (const ticker of okxData(body)) {
    if (!isRecord(ticker) || typeof ticker.instId !== 'string') continue;
    const instrument = splitDashed(ticker.instId);
    if (instrument === undefined || !isQuoteCurrency(instrument.quote)) continue;
    const price = parsePrice(ticker.last);
    if (price === undefined) continue;
    const observedAt = parseEpoch(ticker.ts, 'ms') ?? receivedAt;
    quotes.push({
      source: 'okx',
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
