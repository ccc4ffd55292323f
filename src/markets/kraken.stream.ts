import type { VenueQuote } from './price-source.js';
import { chunked, type StreamMessage, type StreamProtocol } from './price-stream.js';
import { parseStreamJson } from './stream-json.js';
import { VenueError } from './venue-error.js';
import { expectArray, expectRecord, isRecord, parseAmount, parsePrice } from './venue-json.js';

/**
 * Kraken WebSocket v2: the `ticker` channel by `BTC/USD` symbols (v2 uses BTC and DOGE, not XBT
 * and XDG). Kraken sends a heartbeat every second once subscribed; clients may also ping.
 */
export const KRAKEN_STREAM: StreamProtocol = {
  path: '/v2',
  subscribe: (instruments) =>
    chunked(
      instruments
        .filter((instrument) => instrument.quote === 'USD')
        .map((instrument) => `${instrument.symbol}/USD`),
      100,
    ).map((symbol) =>
      JSON.stringify({ method: 'subscribe', params: { channel: 'ticker', symbol } }),
    ),
  ping: JSON.stringify({ method: 'ping' }),
  parse: parseKrakenStreamMessage,
};

export function parseKrakenStreamMessage(text: string, receivedAt: number): StreamMessage {
  const message = expectRecord(parseStreamJson(text), 'message');
  if (typeof message.method === 'string') {
    if (message.success === false) {
      return { kind: 'refused', message: `Kraken: ${String(message.error)}` };
    }
    return { kind: 'alive' };
  }
  if (message.channel !== 'ticker') {
    if (typeof message.channel === 'string') return { kind: 'alive' };
    throw new VenueError('invalid_body', 'message has neither method nor channel');
  }
  const quotes: VenueQuote[] = [];
  for (const ticker of expectArray(message.data, 'data')) {
    if (!isRecord(ticker) || typeof ticker.symbol !== 'string') continue;
    const [base, quote] = ticker.symbol.split('/');
    const price = parsePrice(ticker.last);
    if (base === undefined || quote !== 'USD' || price === undefined) continue;
    quotes.push({
      symbol: base.toUpperCase(),
      quote: 'USD',
      price,
      volume: parseAmount(ticker.volume),
      observedAt: receivedAt,
    });
  }
  return { kind: 'quotes', quotes };
}
