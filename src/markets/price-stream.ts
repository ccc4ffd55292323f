import type { QuoteCurrency, VenueQuote } from './price-source.js';

/** One instrument to subscribe to, in our naming (`BTC` in `USDT`). */
export interface StreamInstrument {
  readonly symbol: string;
  readonly quote: QuoteCurrency;
}

/** What one stream message means. */
export type StreamMessage =
  /** Ticker updates, already in our naming; the stream adds its venue's id. */
  | { readonly kind: 'quotes'; readonly quotes: VenueQuote[] }
  /** A heartbeat, a pong or a subscription acknowledgement: the stream is alive. */
  | { readonly kind: 'alive' }
  /** The venue refused something (a subscription): alive, but worth reporting. */
  | { readonly kind: 'refused'; readonly message: string };

/**
 * A venue's WebSocket ticker protocol: where to connect, how to subscribe, how to keep the
 * connection alive and how to read its messages. The connection itself is VenueStream's.
 */
export interface StreamProtocol {
  /** Path (and query) appended to the stream's base URL. */
  readonly path: string;
  /** The messages that subscribe to these instruments, sent after every (re)connection. */
  subscribe(instruments: readonly StreamInstrument[]): string[];
  /** The application-level ping the venue expects from clients, when it does not ping itself. */
  readonly ping?: string;
  /** Reads one text message; throws a VenueError (`invalid_body`) for one it cannot read. */
  parse(text: string, receivedAt: number): StreamMessage;
}

/** A source's stream: its venue's id, its protocol and the base URL (scheme + host) it is reached at. */
export interface StreamEndpoint {
  readonly venue: string;
  readonly protocol: StreamProtocol;
  readonly baseUrl: string;
}

/** Splits a list into chunks of at most `size`: venues cap the topics per subscribe message. */
export function chunked<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size)
    chunks.push(items.slice(start, start + size));
  return chunks;
}
