import { isQuoteCurrency, splitDashed } from './instrument-names.js';
import type { VenueQuote } from './price-source.js';
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

/** KuCoin's all-tickers snapshot (rebuilt upstream every 2 s), stamped with its own time. */
export const KUCOIN: JsonVenue = {
  id: 'kucoin',
  summary:
    'USD, USDT and USDC pairs by their current name (`symbolName`), dated by the snapshot `time`; a `code` other than `"200000"` is a failure',
  defaultBaseUrl: 'https://api.kucoin.com',
  path: '/api/v1/market/allTickers',
  // the all-tickers snapshot is rebuilt every 2 s upstream: asking more often only repeats it
  minIntervalMs: 2000,
  parse: parseKucoinAllTickers,
};

export function parseKucoinAllTickers(body: unknown, receivedAt: number): VenueQuote[] {
  const data = kucoinData(body);
  const observedAt = Math.min(parseEpoch(data.time, 'ms') ?? receivedAt, receivedAt);
  const quotes: VenueQuote[] = [];
  for (const ticker of expectArray(data.ticker, 'ticker')) {
    if (!isRecord(ticker)) continue;
    const instrument = splitDashed(currentName(ticker) ?? '');
    if (instrument === undefined || !isQuoteCurrency(instrument.quote)) continue;
    const price = parsePrice(ticker.last);
    if (price === undefined) continue;
    quotes.push({
      symbol: instrument.base,
      quote: instrument.quote,
      price,
      volume: parseAmount(ticker.vol),
      observedAt,
    });
  }
  return quotes;
}

/** `symbolName` follows an asset's renaming while `symbol` keeps the listing's original code. */
function currentName(ticker: Record<string, unknown>): string | undefined {
  if (typeof ticker.symbolName === 'string') return ticker.symbolName;
  return typeof ticker.symbol === 'string' ? ticker.symbol : undefined;
}

/** KuCoin answers errors with HTTP 200 and a `code` other than "200000". */
function kucoinData(body: unknown): Record<string, unknown> {
  const envelope = expectRecord(body, 'body');
  if (envelope.code !== '200000') throw venueReportedError('KuCoin', envelope.code, envelope.msg);
  return expectRecord(envelope.data, 'data');
}
