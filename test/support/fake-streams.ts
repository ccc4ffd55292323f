import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { FIXTURE_MOMENT_MS, movedBy } from './fake-markets.js';
import type { PriceWalk } from './price-walk.js';
import { builtInVenue } from '../../src/markets/venues.js';
import { closeServer } from './close-server.js';
import { recordedStreamMessages } from './stream-fixtures.js';

type Json = Record<string, unknown>;
/** The factor for an instrument, by the stream's name for it (`BTC-USD`, `BTC/USD`, `BTCUSDT`). */
type FactorOf = (instrument: string) => number;

/** How a fake stream misbehaves: not at all, never a word, only garbage, or closing on connect. */
export type StreamFault = 'none' | 'silent' | 'garbage' | 'storm';

/** How each streaming venue is replayed from test/fixtures/streams; its path is its protocol's. */
interface StreamReplay {
  /** Indexes of the recorded messages: acknowledgement, ticker data, keep-alive, pong. */
  readonly ack?: number;
  readonly data: readonly number[];
  readonly heartbeat?: number;
  readonly pong?: number;
  /** Whether a client message is a subscription, or the venue's application ping. */
  isSubscribe(message: string): boolean;
  isPing(message: string): boolean;
  /** Moves recorded times forward by shiftMs and multiplies prices by their factor, in place. */
  adjust(message: unknown, shiftMs: number, factor: FactorOf): void;
}

const scaled = (value: unknown, factor: number): string => String(Number(value) * factor);
const includes = (text: string) => (message: string) => message.includes(text);

export const STREAM_REPLAYS = {
  coinbase: {
    ack: 0,
    data: [1, 3],
    heartbeat: 2,
    isSubscribe: includes('"subscribe"'),
    isPing: () => false,
    adjust: (message, shiftMs, factor) => {
      const body = message as { timestamp: string; events: { tickers?: Json[] }[] };
      body.timestamp = new Date(Date.parse(body.timestamp) + shiftMs).toISOString();
      for (const event of body.events)
        for (const ticker of event.tickers ?? [])
          ticker.price = scaled(ticker.price, factor(String(ticker.product_id)));
    },
  },
  kraken: {
    ack: 0,
    data: [1, 2, 5],
    heartbeat: 3,
    pong: 4,
    isSubscribe: includes('"subscribe"'),
    isPing: includes('"ping"'),
    adjust: (message, _shiftMs, factor) => {
      for (const ticker of (message as { data: { symbol: string; last: number }[] }).data)
        ticker.last *= factor(ticker.symbol);
    },
  },
  binance: {
    data: [0],
    isSubscribe: () => false,
    isPing: () => false,
    adjust: (message, shiftMs, factor) => {
      for (const ticker of message as { E: number; s: string; c: string }[]) {
        ticker.E += shiftMs;
        ticker.c = scaled(ticker.c, factor(ticker.s));
      }
    },
  },
  okx: {
    ack: 0,
    data: [1, 2, 5],
    pong: 3,
    isSubscribe: includes('"subscribe"'),
    isPing: (message) => message === 'ping',
    adjust: (message, shiftMs, factor) => {
      for (const ticker of (message as { data: Json[] }).data) {
        ticker.ts = String(Number(ticker.ts) + shiftMs);
        ticker.last = scaled(ticker.last, factor(String(ticker.instId)));
      }
    },
  },
  bybit: {
    ack: 0,
    data: [1, 2, 5],
    pong: 3,
    isSubscribe: includes('"subscribe"'),
    isPing: includes('"ping"'),
    adjust: (message, shiftMs, factor) => {
      const body = message as { ts: number; data: Json };
      body.ts += shiftMs;
      body.data.lastPrice = scaled(body.data.lastPrice, factor(String(body.data.symbol)));
    },
  },
} satisfies Record<string, StreamReplay>;

export type StreamingVenue = keyof typeof STREAM_REPLAYS;
export const STREAMING_VENUES = Object.keys(STREAM_REPLAYS) as StreamingVenue[];

/**
 * One venue's stream on loopback: answers subscriptions and pings as the venue does and, to
 * every connection, replays the recorded ticker messages (times moved to now) every `tickMs`,
 * with a price factor a test can change. With a price walk, its prices follow the walk too, and
 * every move is sent at once, as a venue pushes a trade. Misbehaves on demand.
 */
export class FakeStream {
  /** Connections accepted so far, and the client messages each one sent. */
  readonly connections: string[][] = [];
  factor = 1;
  private fault: StreamFault = 'none';
  private readonly sockets = new Set<WebSocket>();
  private readonly timer: NodeJS.Timeout;
  private readonly stopWalking: (() => void) | undefined;

  private constructor(
    private readonly replay: StreamReplay,
    private readonly path: string,
    private readonly messages: readonly string[],
    private readonly server: Server,
    private readonly wss: WebSocketServer,
    readonly url: string,
    tickMs: number,
    private readonly walk: PriceWalk | undefined,
  ) {
    wss.on('connection', (socket, request) => {
      this.accept(socket, request.url ?? '/');
    });
    this.timer = setInterval(() => {
      this.tick();
    }, tickMs);
    this.stopWalking = walk?.onMove(() => {
      this.pushData();
    });
  }

  static async start(id: StreamingVenue, tickMs = 250, walk?: PriceWalk): Promise<FakeStream> {
    const server = createServer();
    const wss = new WebSocketServer({ server });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const protocol = builtInVenue(id).stream?.protocol;
    if (protocol === undefined) throw new Error(`venue ${id} has no stream`);
    return new FakeStream(
      STREAM_REPLAYS[id],
      // a stream URL without a path (Coinbase) is requested as `/`
      protocol.path === '' ? '/' : protocol.path,
      recordedStreamMessages(id),
      server,
      wss,
      `ws://127.0.0.1:${port}`,
      tickMs,
      walk,
    );
  }

  /** From now on, misbehave this way; `storm` and `silent` also apply to open connections. */
  misbehave(fault: StreamFault): void {
    this.fault = fault;
    if (fault === 'storm') for (const socket of this.sockets) socket.terminate();
  }

  /** Connections open right now. */
  get openConnections(): number {
    return this.sockets.size;
  }

  /** Closes every open connection, as a venue restarting would. */
  drop(): void {
    for (const socket of this.sockets) socket.terminate();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.stopWalking?.();
    for (const socket of this.sockets) socket.terminate();
    await new Promise<void>((resolve) => {
      this.wss.close(() => {
        resolve();
      });
    });
    await closeServer(this.server, []);
  }

  private accept(socket: WebSocket, path: string): void {
    const received: string[] = [];
    this.connections.push(received);
    socket.on('error', () => undefined);
    if (path !== this.path || this.fault === 'storm') {
      socket.terminate();
      return;
    }
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('message', (data) => {
      const text = Array.isArray(data)
        ? Buffer.concat(data).toString('utf8')
        : Buffer.from(data as ArrayBuffer).toString('utf8');
      received.push(text);
      if (this.fault === 'silent') return;
      if (this.replay.isSubscribe(text) && this.replay.ack !== undefined) {
        this.send(socket, this.replay.ack);
        for (const index of this.replay.data) this.send(socket, index);
      }
      if (this.replay.isPing(text) && this.replay.pong !== undefined) {
        this.send(socket, this.replay.pong);
      }
    });
  }

  private tick(): void {
    if (this.fault === 'silent') return;
    for (const socket of this.sockets) {
      for (const index of this.replay.data) this.send(socket, index);
      if (this.replay.heartbeat !== undefined) this.send(socket, this.replay.heartbeat);
    }
  }

  /** The ticker messages to every connection now (a move of the walk). */
  private pushData(): void {
    if (this.fault === 'silent') return;
    for (const socket of this.sockets) {
      for (const index of this.replay.data) this.send(socket, index);
    }
  }

  private send(socket: WebSocket, index: number): void {
    if (this.fault === 'garbage') {
      socket.send('\u0000\u00ff{"garbage":');
      return;
    }
    const text = this.messages[index];
    if (text === undefined) return;
    let frame = text;
    if (this.replay.data.includes(index)) {
      const message = JSON.parse(text) as unknown;
      this.replay.adjust(
        message,
        Date.now() - FIXTURE_MOMENT_MS,
        (instrument) => this.factor * movedBy(this.walk, instrument),
      );
      frame = JSON.stringify(message);
    }
    socket.send(frame);
  }
}

/** Several venues' fake streams, with the env pointing the service at them. */
export class FakeStreams {
  private constructor(readonly streams: ReadonlyMap<StreamingVenue, FakeStream>) {}

  static async start(
    venues: readonly StreamingVenue[] = STREAMING_VENUES,
    tickMs?: number,
    walk?: PriceWalk,
  ): Promise<FakeStreams> {
    const streams = new Map<StreamingVenue, FakeStream>();
    for (const id of venues) streams.set(id, await FakeStream.start(id, tickMs, walk));
    return new FakeStreams(streams);
  }

  stream(id: StreamingVenue): FakeStream {
    const stream = this.streams.get(id);
    if (stream === undefined) throw new Error(`stream ${id} was not started`);
    return stream;
  }

  /** MARKET_STREAMS and MARKET_<ID>_STREAM_URL for these streams. */
  env(): Record<string, string> {
    const env: Record<string, string> = { MARKET_STREAMS: [...this.streams.keys()].join(',') };
    for (const [id, stream] of this.streams)
      env[`MARKET_${id.toUpperCase()}_STREAM_URL`] = stream.url;
    return env;
  }

  async close(): Promise<void> {
    await Promise.all([...this.streams.values()].map((stream) => stream.close()));
  }
}
