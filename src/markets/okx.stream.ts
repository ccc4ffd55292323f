import { isQuoteCurrency, splitDashed } from './instrument-names.js';
import type { VenueQuote } from './price-source.js';
import { chunked, type StreamMessage, type StreamProtocol } from './price-stream.js';
import { parseStreamJson } from './stream-json.js';
import { VenueError } from './venue-error.js';
import {
  expectArray,
  expectRecord,
  isRecord,
  parseAmount,
  parseEpoch,
  parsePrice,
} from './venue-json.js';

/**
 * OKX public WebSocket: the `tickers` channel per instrument (`BTC-USDT`). OKX closes a
 * connection silent for 30 s, so clients send the text `ping` and get `pong` back.
 */
export const OKX_STREAM: StreamProtocol = {
  path: '/ws/v5/public',
  subscribe: (instruments) =>
    chunked(instruments, 100).map((chunk) =>
      JSON.stringify({
        op: 'subscribe',
        args: chunk.map((instrument) => ({
          channel: 'tickers',
          instId: `${instrument.symbol}-${instrument.quote}`,
        })),
      }),
    ),
  ping: 'ping',
  parse: parseOkxStreamMessage,
};

export function parseOkxStreamMessage(text: string, receivedAt: number): StreamMessage {
  if (text === 'pong') return { kind: 'alive' };
  const message = expectRecord(parseStreamJson(text), 'message');
  if (message.event === 'error') {
    return {
      kind: 'refused',
      message: `OKX error ${String(message.code)}: ${String(message.msg)}`,
    };
  }
  if (typeof message.event === 'string') return { kind: 'alive' };
  if (!isRecord(message.arg) || message.arg.channel !== 'tickers') {
    throw new VenueError('invalid_body', 'message is neither an event nor tickers');
  }
  const quotes: VenueQuote[] = [];
  for (const ticker of expectArray(message.data, 'data')) {
    if (!isRecord(ticker) || typeof ticker.instId !== 'string') continue;
    const instrument = splitDashed(ticker.instId);
    const price = parsePrice(ticker.last);
    if (instrument === undefined || !isQuoteCurrency(instrument.quote) || price === undefined)
      continue;
    quotes.push({
      symbol: instrument.base,
      quote: instrument.quote,
      price,
      volume: parseAmount(ticker.vol24h),
      observedAt: Math.min(parseEpoch(ticker.ts, 'ms') ?? receivedAt, receivedAt),
    });
  }
  return { kind: 'quotes', quotes };
}
