import type { VenueQuote } from './price-source.js';
import type { StreamMessage, StreamProtocol } from './price-stream.js';
import { parseIsoTime, parseStreamJson } from './stream-json.js';
import { VenueError } from './venue-error.js';
import { expectArray, expectRecord, isRecord, parseAmount, parsePrice } from './venue-json.js';

/**
 * Coinbase Advanced Trade market data: the `ticker` channel for the USD products, and the
 * `heartbeats` channel, which ticks every second and keeps a quiet connection open.
 */
export const COINBASE_STREAM: StreamProtocol = {
  path: '',
  subscribe: (instruments) => [
    JSON.stringify({
      type: 'subscribe',
      product_ids: instruments
        .filter((instrument) => instrument.quote === 'USD')
        .map((instrument) => `${instrument.symbol}-USD`),
      channel: 'ticker',
    }),
    JSON.stringify({ type: 'subscribe', channel: 'heartbeats' }),
  ],
  parse: parseCoinbaseStreamMessage,
};

export function parseCoinbaseStreamMessage(text: string, receivedAt: number): StreamMessage {
  const message = expectRecord(parseStreamJson(text), 'message');
  if (message.type === 'error') {
    return { kind: 'refused', message: `Coinbase: ${String(message.message)}` };
  }
  if (message.channel !== 'ticker') {
    if (typeof message.channel === 'string') return { kind: 'alive' };
    throw new VenueError('invalid_body', 'message has no channel');
  }
  const sentAt = parseIsoTime(message.timestamp) ?? receivedAt;
  const quotes: VenueQuote[] = [];
  for (const event of expectArray(message.events, 'events')) {
    if (!isRecord(event)) continue;
    for (const ticker of expectArray(event.tickers, 'tickers')) {
      if (!isRecord(ticker) || typeof ticker.product_id !== 'string') continue;
      const [base, quote] = ticker.product_id.split('-');
      const price = parsePrice(ticker.price);
      if (base === undefined || quote !== 'USD' || price === undefined) continue;
      quotes.push({
        symbol: base.toUpperCase(),
        quote: 'USD',
        price,
        volume: parseAmount(ticker.volume_24_h),
        observedAt: Math.min(sentAt, receivedAt),
      });
    }
  }
  return { kind: 'quotes', quotes };
}
