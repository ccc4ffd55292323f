import { splitBySuffix } from './instrument-names.js';
import { chunked, type StreamMessage, type StreamProtocol } from './price-stream.js';
import { parseStreamJson } from './stream-json.js';
import { VenueError } from './venue-error.js';
import { expectRecord, isRecord, parseAmount, parseEpoch, parsePrice } from './venue-json.js';

const BYBIT_QUOTES = ['USDT', 'USDC'] as const;
/** Bybit spot accepts at most ten topics per subscribe request. */
const TOPICS_PER_REQUEST = 10;

/**
 * Bybit v5 public spot: `tickers.<SYMBOL>` topics. Bybit drops connections without a ping for
 * about 20 s, so clients send `{"op":"ping"}`.
 */
export const BYBIT_STREAM: StreamProtocol = {
  path: '/v5/public/spot',
  subscribe: (instruments) =>
    chunked(
      instruments
        .filter((instrument) => instrument.quote !== 'USD')
        .map((instrument) => `tickers.${instrument.symbol}${instrument.quote}`),
      TOPICS_PER_REQUEST,
    ).map((args) => JSON.stringify({ op: 'subscribe', args })),
  ping: JSON.stringify({ op: 'ping' }),
  parse: parseBybitStreamMessage,
};

export function parseBybitStreamMessage(text: string, receivedAt: number): StreamMessage {
  const message = expectRecord(parseStreamJson(text), 'message');
  if (typeof message.op === 'string') {
    if (message.success === false) {
      return { kind: 'refused', message: `Bybit: ${String(message.ret_msg)}` };
    }
    return { kind: 'alive' };
  }
  if (typeof message.topic !== 'string' || !message.topic.startsWith('tickers.')) {
    throw new VenueError('invalid_body', 'message is neither an operation nor tickers');
  }
  const ticker = message.data;
  if (!isRecord(ticker) || typeof ticker.symbol !== 'string') {
    throw new VenueError('invalid_body', 'tickers message without data');
  }
  const instrument = splitBySuffix(ticker.symbol, BYBIT_QUOTES);
  const price = parsePrice(ticker.lastPrice);
  if (instrument === undefined || price === undefined) return { kind: 'quotes', quotes: [] };
  return {
    kind: 'quotes',
    quotes: [
      {
        symbol: instrument.base,
        quote: instrument.quote,
        price,
        volume: parseAmount(ticker.volume24h),
        observedAt: Math.min(parseEpoch(message.ts, 'ms') ?? receivedAt, receivedAt),
      },
    ],
  };
}
