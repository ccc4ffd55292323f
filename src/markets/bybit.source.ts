import { splitBySuffix } from './instrument-names.js';
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

export const BYBIT_SPOT_TICKERS_PATH = '/v5/market/tickers?category=spot';

const BYBIT_QUOTES = ['USDT', 'USDC'] as const;

/** Bybit spot tickers: every spot symbol with its last price and 24 h volume, one server time. */
export class BybitSource implements PriceSource {
  readonly id = 'bybit';

  constructor(private readonly venue: VenueConnection) {}

  async fetchQuotes(): Promise<RawQuote[]> {
    const body = await this.venue.getJson(BYBIT_SPOT_TICKERS_PATH);
    return parseBybitTickers(body, this.venue.now());
  }
}

export function parseBybitTickers(body: unknown, receivedAt: number): RawQuote[] {
  const envelope = bybitEnvelope(body);
  const tickers = expectArray(expectRecord(envelope.result, 'result').list, 'list');
  const observedAt = Math.min(parseEpoch(envelope.time, 'ms') ?? receivedAt, receivedAt);
  const quotes: RawQuote[] = [];
  for (const ticker of tickers) {
    if (!isRecord(ticker) || typeof ticker.symbol !== 'string') continue;
    const instrument = splitBySuffix(ticker.symbol, BYBIT_QUOTES);
    if (instrument === undefined) continue;
    const price = parsePrice(ticker.lastPrice);
    if (price === undefined) continue;
    quotes.push({
      source: 'bybit',
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
