import WebSocket from 'ws';
import { backoffDelay, type Backoff } from '../common/backoff.js';
import type { RawQuote } from './price-source.js';
import type { StreamEndpoint, StreamInstrument } from './price-stream.js';
import { remoteText } from '../common/remote-text.js';
import { VenueError } from './venue-error.js';

/**
 * `connecting`: opening or waiting for its first ticker data; `live`: a message arrived within the
 * quiet limit; `quiet`: nothing readable for that long (then reconnected); `down`: closed,
 * waiting to reconnect.
 */
export const STREAM_STATES = ['idle', 'connecting', 'live', 'quiet', 'down'] as const;

export type StreamState = (typeof STREAM_STATES)[number];

export interface StreamOptions {
  /** A stream silent (no readable message) for this long counts as stale and is reconnected. */
  readonly quietMs: number;
  /** Time-out of the WebSocket handshake. */
  readonly connectTimeoutMs: number;
  /** Delay before each reconnection while connections keep failing. */
  readonly reconnect: Backoff;
}

export interface StreamStatus {
  readonly state: StreamState;
  /** Connections opened so far (the first one included). */
  readonly connections: number;
  readonly lastMessageAt: number | undefined;
  readonly lastError: { readonly message: string; readonly at: number } | undefined;
  /** When the next connection attempt is due, while down. */
  readonly reconnectAt: number | undefined;
}

export interface StreamHandlers {
  quotes(quotes: readonly RawQuote[]): void;
  state(state: StreamState): void;
}

/**
 * One venue's ticker stream: connects, subscribes, pings as the venue wants, declares itself
 * stale after `quietMs` without a readable message, and reconnects (and resubscribes) with an
 * exponential back-off that only resets once a connection has delivered data.
 */
export class VenueStream {
  private socket: WebSocket | undefined;
  private instruments: readonly StreamInstrument[] = [];
  private handlers: StreamHandlers | undefined;
  private current: StreamState = 'idle';
  private failures = 0;
  private connections = 0;
  private lastMessageAt: number | undefined;
  private lastError: StreamStatus['lastError'];
  /** Unreadable messages since the last readable one, and why the latest was unreadable. */
  private unreadable = { count: 0, reason: '' };
  private reconnectAt: number | undefined;
  private quietTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly endpoint: StreamEndpoint,
    private readonly options: StreamOptions,
    private readonly now: () => number = Date.now,
  ) {}

  get state(): StreamState {
    return this.current;
  }

  isLive(): boolean {
    return this.current === 'live';
  }

  status(): StreamStatus {
    return {
      state: this.current,
      connections: this.connections,
      lastMessageAt: this.lastMessageAt,
      lastError: this.lastError,
      reconnectAt: this.current === 'down' ? this.reconnectAt : undefined,
    };
  }

  /** Connects and subscribes to these instruments, now and after every reconnection. */
  start(instruments: readonly StreamInstrument[], handlers: StreamHandlers): void {
    this.instruments = instruments;
    this.handlers = handlers;
    this.connect();
  }

  stop(): void {
    this.handlers = undefined;
    this.clearTimers();
    clearTimeout(this.reconnectTimer);
    this.socket?.removeAllListeners();
    this.socket?.on('error', () => undefined);
    this.socket?.terminate();
    this.socket = undefined;
    this.current = 'idle';
  }

  private connect(): void {
    if (this.handlers === undefined) return;
    this.connections += 1;
    this.setState('connecting');
    const url = `${this.endpoint.baseUrl}${this.endpoint.protocol.path}`;
    const socket = new WebSocket(url, {
      handshakeTimeout: this.options.connectTimeoutMs,
      maxPayload: 16 * 1024 * 1024,
    });
    this.socket = socket;
    socket.on('open', () => {
      for (const message of this.endpoint.protocol.subscribe(this.instruments))
        socket.send(message);
      this.armQuietTimer();
      const ping = this.endpoint.protocol.ping;
      if (ping !== undefined) {
        this.pingTimer = setInterval(
          () => {
            if (socket.readyState === WebSocket.OPEN) socket.send(ping);
          },
          Math.max(100, Math.floor(this.options.quietMs / 3)),
        );
      }
    });
    socket.on('message', (data, isBinary) => {
      this.onMessage(isBinary ? undefined : rawText(data));
    });
    socket.on('error', (error) => {
      this.noteError(error.message, this.now());
    });
    socket.on('close', () => {
      if (this.socket === socket) this.reconnectLater();
    });
  }

  /** Stream error text is venue text: one printable line, capped, before it is logged or shown. */
  private noteError(message: string, at: number): void {
    this.lastError = { message: remoteText(message), at };
  }

  private onMessage(text: string | undefined): void {
    const receivedAt = this.now();
    let message;
    try {
      if (text === undefined) throw new VenueError('invalid_body', 'binary message');
      message = this.endpoint.protocol.parse(text, receivedAt);
    } catch (error) {
      // unreadable: no sign of life, so a stream sending only garbage goes quiet
      this.unreadable = { count: this.unreadable.count + 1, reason: describe(error) };
      this.noteError(this.unreadable.reason, receivedAt);
      return;
    }
    this.unreadable = { count: 0, reason: '' };
    this.lastMessageAt = receivedAt;
    this.armQuietTimer();
    if (message.kind === 'refused') this.noteError(message.message, receivedAt);
    // a connection goes live with its first ticker data; acks, heartbeats and pongs keep it so
    if (message.kind === 'quotes') {
      this.failures = 0;
      this.setState('live');
      this.handlers?.quotes(
        message.quotes.map((quote) => ({ ...quote, source: this.endpoint.venue })),
      );
    }
  }

  private armQuietTimer(): void {
    clearTimeout(this.quietTimer);
    this.quietTimer = setTimeout(() => {
      const { count, reason } = this.unreadable;
      this.noteError(
        `no readable message for ${this.options.quietMs} ms` +
          (count === 0 ? '' : ` (${count} unreadable, the last: ${reason})`),
        this.now(),
      );
      this.setState('quiet');
      const socket = this.socket;
      this.reconnectLater();
      socket?.terminate();
    }, this.options.quietMs);
  }

  private reconnectLater(): void {
    this.clearTimers();
    const socket = this.socket;
    this.socket = undefined;
    socket?.removeAllListeners();
    socket?.on('error', () => undefined);
    if (this.handlers === undefined) return;
    this.failures += 1;
    const delay = backoffDelay(this.failures - 1, this.options.reconnect);
    this.reconnectAt = this.now() + delay;
    if (this.current !== 'quiet') this.setState('down');
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      this.connect();
    }, delay);
  }

  private clearTimers(): void {
    clearTimeout(this.quietTimer);
    clearInterval(this.pingTimer);
    this.quietTimer = undefined;
    this.pingTimer = undefined;
  }

  private setState(state: StreamState): void {
    if (this.current === state) return;
    this.current = state;
    this.handlers?.state(state);
  }
}

function rawText(data: WebSocket.RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
