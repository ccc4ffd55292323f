import { splitBySuffix } from './instrument-names.js';
import type { VenueQuote } from './price-source.js';
import type { StreamMessage, StreamProtocol } from './price-stream.js';
import { parseStreamJson } from './stream-json.js';
import { VenueError } from './venue-error.js';
import { isRecord, parseAmount, parseEpoch, parsePrice } from './venue-json.js';

const BINANCE_QUOTES = ['USDT', 'USDC'] as const;

/**
 * Binance spot `!miniTicker@arr`: every second, the mini ticker of each symbol that changed; the
 * stream is chosen by its path, so there is nothing to send. Binance pings and `ws` answers.
 * Symbols outside the subscription are left for the caller to filter.
 */
export const BINANCE_STREAM: StreamProtocol = {
  path: '/ws/!miniTicker@arr',
  subscribe: () => [],
  parse: parseBinanceStreamMessage,
};

export function parseBinanceStreamMessage(text: string, receivedAt: number): StreamMessage {
  const message = parseStreamJson(text);
  if (!Array.isArray(message)) {
    if (isRecord(message) && message.result === null) return { kind: 'alive' };
    if (isRecord(message) && isRecord(message.error)) {
      return { kind: 'refused', message: `Binance: ${String(message.error.msg)}` };
    }
    throw new VenueError('invalid_body', 'message is not a mini ticker array');
  }
  const quotes: VenueQuote[] = [];
  for (const ticker of message) {
    if (!isRecord(ticker) || ticker.e !== '24hrMiniTicker' || typeof ticker.s !== 'string')
      continue;
    const instrument = splitBySuffix(ticker.s, BINANCE_QUOTES);
    const price = parsePrice(ticker.c);
    if (instrument === undefined || price === undefined) continue;
    quotes.push({
      symbol: instrument.base,
      quote: instrument.quote,
      price,
      volume: parseAmount(ticker.v),
      observedAt: Math.min(parseEpoch(ticker.E, 'ms') ?? receivedAt, receivedAt),
    });
  }
  return { kind: 'quotes', quotes };
}
