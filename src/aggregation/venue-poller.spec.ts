import { SchedulerRegistry } from '@nestjs/schedule';
import type { PriceSource, RawQuote } from '../markets/price-source.js';
import type { StreamInstrument } from '../markets/price-stream.js';
import { VenueError } from '../markets/venue-error.js';
import type {
  StreamHandlers,
  StreamState,
  StreamStatus,
  VenueStream,
} from '../markets/venue-stream.js';
import { ScheduledTimeout } from '../common/timeout-slot.js';
import { VenuePoller } from './venue-poller.js';

/** A venue that answers when the test says so, recording each call. */
class ControlledSource implements PriceSource {
  readonly id = 'controlled';
  calls = 0;
  private pending: ((quotes: RawQuote[]) => void)[] = [];

  fetchQuotes(): Promise<RawQuote[]> {
    this.calls += 1;
    return new Promise((resolve) => this.pending.push(resolve));
  }

  answer(quotes: RawQuote[] = []): void {
    for (const resolve of this.pending.splice(0)) resolve(quotes);
  }
}

/** A venue answering each call with the next scripted quotes or error. */
class ScriptedSource implements PriceSource {
  readonly id = 'scripted';
  calls = 0;

  constructor(private readonly answers: (RawQuote[] | Error)[]) {}

  fetchQuotes(): Promise<RawQuote[]> {
    this.calls += 1;
    const answer = this.answers.shift() ?? [];
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
  }
}

/** A clock reading these moments one call at a time (a poll reads it at start and at finish). */
const clock = (...moments: number[]) => {
  const queue = [...moments];
  return () => {
    const moment = queue.shift();
    if (moment === undefined) throw new Error('clock read more often than scripted');
    return moment;
  };
};

const quote = (symbol: string, price: number, observedAt: number, quote: 'USD' | 'USDT' = 'USD') =>
  ({ source: 'scripted', symbol, quote, price, observedAt }) satisfies RawQuote;

/** A poller's timer as the service gives it: a timeout the scheduler lists. */
const timer = () => new ScheduledTimeout(new SchedulerRegistry(), 'venue-poll:test');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('VenuePoller on its own clock', () => {
  it('polls at its own interval and tells the listener after each attempt', async () => {
    const source = new ControlledSource();
    const poller = new VenuePoller(source, 40, timer());
    const told: string[] = [];
    poller.start((_poller, change) => told.push(`${change.before}→${change.after}`));
    try {
      await sleep(5);
      expect(source.calls).toBe(1);
      source.answer();
      await sleep(60);
      expect(source.calls).toBe(2);
      expect(told).toEqual(['waiting→ok']);
    } finally {
      poller.stop();
      source.answer();
    }
  });

  it('never starts a second request while one is in flight, and refresh joins it', async () => {
    const source = new ControlledSource();
    const poller = new VenuePoller(source, 10, timer());
    poller.start(() => undefined);
    try {
      await sleep(50);
      expect(source.calls).toBe(1);
      const joined = poller.pollIfDue();
      expect(source.calls).toBe(1);
      source.answer();
      await joined;
      expect(poller.snapshot().status).toBe('ok');
    } finally {
      poller.stop();
      source.answer();
    }
  });

  it('stops polling once stopped', async () => {
    const source = new ControlledSource();
    const poller = new VenuePoller(source, 10, timer());
    poller.start(() => undefined);
    await sleep(5);
    source.answer();
    poller.stop();
    await sleep(50);
    expect(source.calls).toBe(1);
  });
});

describe('VenuePoller.poll: state, pace and back-off', () => {
  const INTERVAL = 1000;

  it('records a good snapshot and is due again one interval after the attempt started', async () => {
    const quotes = [quote('BTC', 100, 5), quote('ETH', 10, 5)];
    const poller = new VenuePoller(new ScriptedSource([quotes]), INTERVAL, timer());
    expect(poller.isDue(0)).toBe(true);
    expect(await poller.poll(clock(10_000, 10_150))).toEqual({ before: 'waiting', after: 'ok' });
    expect(poller.snapshot()).toEqual({
      id: 'scripted',
      status: 'ok',
      lastAttemptAt: 10_000,
      lastSuccessAt: 10_150,
      lastError: undefined,
      latencyMs: 150,
      consecutiveFailures: 0,
      nextPollAt: 11_000,
      instruments: 2,
      transport: 'rest',
      stream: undefined,
    });
    expect(poller.lastQuotes()).toEqual(quotes);
    expect(poller.isDue(10_999)).toBe(false);
    expect(poller.isDue(11_000)).toBe(true);
  });

  it('backs off twice as long after each failure in a row, up to five minutes', async () => {
    const failures = Array.from({ length: 12 }, () => new VenueError('timeout', 'no answer'));
    const poller = new VenuePoller(new ScriptedSource(failures), INTERVAL, timer());
    const waits: number[] = [];
    for (let attempt = 0; attempt < 12; attempt += 1) {
      await poller.poll(clock(0, 100));
      waits.push(poller.snapshot().nextPollAt - 100);
    }
    expect(waits).toEqual([
      1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000, 300_000,
    ]);
    expect(poller.snapshot()).toMatchObject({
      status: 'failing',
      consecutiveFailures: 12,
      lastError: { kind: 'timeout', message: 'no answer', at: 100 },
    });
  });

  it('keeps its last good quotes through failures, and a success resets the failures', async () => {
    const quotes = [quote('BTC', 100, 5)];
    const source = new ScriptedSource([quotes, new VenueError('http_status', 'HTTP 502'), []]);
    const poller = new VenuePoller(source, INTERVAL, timer());
    await poller.poll(clock(0, 10));
    expect(await poller.poll(clock(1000, 1010))).toEqual({ before: 'ok', after: 'failing' });
    expect(poller.lastQuotes()).toEqual(quotes);
    expect(poller.snapshot()).toMatchObject({ lastSuccessAt: 10, consecutiveFailures: 1 });
    expect(await poller.poll(clock(3000, 3010))).toEqual({ before: 'failing', after: 'ok' });
    expect(poller.snapshot()).toMatchObject({
      consecutiveFailures: 0,
      lastSuccessAt: 3010,
      nextPollAt: 4000,
      instruments: 0,
    });
  });

  it('waits out a rate limit for its Retry-After when that is longer than the back-off', async () => {
    const source = new ScriptedSource([
      new VenueError('rate_limited', 'HTTP 429', 30_000),
      new VenueError('rate_limited', 'HTTP 429', 500),
    ]);
    const poller = new VenuePoller(source, INTERVAL, timer());
    expect(await poller.poll(clock(0, 20))).toEqual({ before: 'waiting', after: 'rate_limited' });
    expect(poller.snapshot()).toMatchObject({
      nextPollAt: 30_020,
      lastError: { kind: 'rate_limited', message: 'HTTP 429', at: 20 },
    });
    await poller.poll(clock(40_000, 40_020));
    // the back-off (2 s after a second failure) outlasts a shorter Retry-After
    expect(poller.snapshot().nextPollAt).toBe(42_020);
  });

  it('honours a Retry-After of at most an hour', async () => {
    const day = 24 * 60 * 60 * 1000;
    const poller = new VenuePoller(
      new ScriptedSource([new VenueError('rate_limited', 'HTTP 418', day)]),
      INTERVAL,
      timer(),
    );
    await poller.poll(clock(0, 0));
    expect(poller.snapshot().nextPollAt).toBe(60 * 60 * 1000);
  });

  it('reports anything thrown that is not a VenueError as unexpected, and never throws', async () => {
    const poller = new VenuePoller(new ScriptedSource([new TypeError('boom')]), INTERVAL, timer());
    await expect(poller.poll(clock(0, 5))).resolves.toEqual({
      before: 'waiting',
      after: 'failing',
    });
    expect(poller.snapshot().lastError).toEqual({ kind: 'unexpected', message: 'boom', at: 5 });
  });
});

/** A stream the test drives: its state, and the quotes it delivers to the poller. */
class ScriptedStream {
  current: StreamState = 'idle';
  lastMessageAt: number | undefined;
  instruments: readonly StreamInstrument[] = [];
  handlers: StreamHandlers | undefined;
  stopped = false;

  get state(): StreamState {
    return this.current;
  }

  isLive(): boolean {
    return this.current === 'live';
  }

  status(): StreamStatus {
    return {
      state: this.current,
      connections: 1,
      lastMessageAt: this.lastMessageAt,
      lastError: undefined,
      reconnectAt: undefined,
    };
  }

  start(instruments: readonly StreamInstrument[], handlers: StreamHandlers): void {
    this.instruments = instruments;
    this.handlers = handlers;
    this.current = 'connecting';
  }

  stop(): void {
    this.stopped = true;
  }

  deliver(at: number, quotes: RawQuote[]): void {
    this.current = 'live';
    this.lastMessageAt = at;
    this.handlers?.state('live');
    this.handlers?.quotes(quotes);
  }
}

describe('VenuePoller with a ticker stream', () => {
  async function streamingPoller(polled: RawQuote[]) {
    const stream = new ScriptedStream();
    const source = new ScriptedSource([polled, polled, polled]);
    const poller = new VenuePoller(source, 60_000, timer(), {
      stream: stream as unknown as VenueStream,
      symbols: new Set(['BTC', 'ETH']),
    });
    const told: string[] = [];
    poller.start((_poller, change) =>
      told.push(change.stream ?? `${change.before}→${change.after}`),
    );
    await poller.pollIfDue();
    return { stream, source, poller, told };
  }

  it('subscribes, after the first good snapshot, to the catalogue instruments that snapshot lists', async () => {
    const { stream, poller } = await streamingPoller([
      quote('BTC', 100, 1),
      quote('BTC', 100, 1, 'USDT'),
      quote('DOGE', 0.1, 1),
    ]);
    try {
      expect(stream.instruments).toEqual([
        { symbol: 'BTC', quote: 'USD' },
        { symbol: 'BTC', quote: 'USDT' },
      ]);
    } finally {
      poller.stop();
    }
    expect(stream.stopped).toBe(true);
  });

  it('takes the newer quote per instrument, dates subscribed ones at the last message while live, and pauses polling', async () => {
    const { stream, poller, told } = await streamingPoller([
      quote('BTC', 100, 1000),
      quote('ETH', 10, 1000),
    ]);
    try {
      stream.deliver(5000, [quote('BTC', 101, 4000), quote('SOL', 5, 4000)]);
      expect(told).toEqual(['waiting→ok', 'live', 'ok→ok']);
      expect(poller.lastQuotes()).toEqual([quote('BTC', 101, 5000), quote('ETH', 10, 5000)]);
      expect(poller.isDue(Number.MAX_SAFE_INTEGER)).toBe(false);
      expect(poller.snapshot()).toMatchObject({ status: 'ok', transport: 'stream' });

      stream.current = 'down';
      expect(poller.isDue(Number.MAX_SAFE_INTEGER)).toBe(true);
      // no longer live: each quote keeps its own time
      expect(poller.lastQuotes()).toEqual([quote('BTC', 101, 4000), quote('ETH', 10, 1000)]);
      expect(poller.snapshot().transport).toBe('rest');
    } finally {
      poller.stop();
    }
  });
});
