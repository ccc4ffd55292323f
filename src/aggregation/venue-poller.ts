import { backoffDelay } from '../common/backoff.js';
import type { TimeoutSlot } from '../common/timeout-slot.js';
import type { PriceSource, RawQuote } from '../markets/price-source.js';
import type { StreamInstrument } from '../markets/price-stream.js';
import { VENUE_ERROR_KINDS, VenueError } from '../markets/venue-error.js';
import type { StreamState, StreamStatus, VenueStream } from '../markets/venue-stream.js';
import { remoteText } from '../common/remote-text.js';

/** Longest pause after repeated failures; a rate limit's own Retry-After may be longer. */
const MAX_BACKOFF_MS = 5 * 60 * 1000;
/** Longest Retry-After honoured: one bad header must not switch a venue off indefinitely. */
const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

export const VENUE_STATUSES = ['waiting', 'ok', 'failing', 'rate_limited'] as const;
export type VenueStatus = (typeof VENUE_STATUSES)[number];

/** Why the last attempt failed: a VenueError's kind, or `unexpected` for anything else thrown. */
export const SOURCE_ERROR_KINDS = [...VENUE_ERROR_KINDS, 'unexpected'] as const;
export type SourceErrorKind = (typeof SOURCE_ERROR_KINDS)[number];

/** `stream` while its ticker stream is live; `rest` while it is polled. */
export const TRANSPORTS = ['rest', 'stream'] as const;
export type Transport = (typeof TRANSPORTS)[number];

/** What is known about one venue, as /v1/sources and the logs tell it. */
export interface VenueState {
  readonly id: string;
  readonly status: VenueStatus;
  readonly lastAttemptAt: number | undefined;
  readonly lastSuccessAt: number | undefined;
  readonly lastError:
    | {
        readonly kind: SourceErrorKind;
        readonly message: string;
        readonly at: number;
      }
    | undefined;
  readonly latencyMs: number | undefined;
  readonly consecutiveFailures: number;
  readonly nextPollAt: number;
  /** Instruments in its last good snapshot. */
  readonly instruments: number;
  readonly transport: Transport;
  /** Its ticker stream, when it has one. */
  readonly stream: StreamStatus | undefined;
}

/** A venue not asked yet: `nextPollAt` 0, due at once. */
export function waitingState(id: string): VenueState {
  return {
    id,
    status: 'waiting',
    lastAttemptAt: undefined,
    lastSuccessAt: undefined,
    lastError: undefined,
    latencyMs: undefined,
    consecutiveFailures: 0,
    nextPollAt: 0,
    instruments: 0,
    transport: 'rest',
    stream: undefined,
  };
}

/** What changed: the status before and after an attempt or stream update, or the stream's state. */
export interface PollChange {
  readonly before: VenueStatus;
  readonly after: VenueStatus;
  /** Set when the stream changed state. */
  readonly stream?: StreamState;
}

/** Told after every attempt, every batch of streamed quotes and every stream state change. */
export type PollListener = (poller: VenuePoller, change: PollChange) => void;

/** A stream and the catalogue symbols it is subscribed for. */
export interface StreamUse {
  readonly stream: VenueStream;
  readonly symbols: ReadonlySet<string>;
}

/**
 * One venue on its own clock: when it is due (its own interval, longer after failures and as
 * long as a rate limit asks), its last good quotes (kept until they go stale), its state. Once
 * started it polls itself on a timer, so no venue ever waits for another. With a stream, the
 * first good REST snapshot says which catalogue instruments to subscribe to; while the stream
 * is live, REST polling pauses, and it resumes the moment the stream is down or quiet. Its
 * clock is the `timer` it is given (the scheduler's, in the service).
 */
export class VenuePoller {
  private quotes: readonly RawQuote[] = [];
  /** Latest streamed quote per instrument (`BTC/USDT`). */
  private readonly streamed = new Map<string, RawQuote>();
  private subscribed: ReadonlySet<string> = new Set();
  private state: VenueState;
  private inFlight: Promise<void> | undefined;
  private listener: PollListener | undefined;

  constructor(
    readonly source: PriceSource,
    /** Time between two polls of this venue: its own pace, never below its minimum interval. */
    private readonly intervalMs: number,
    /** The timer its next poll waits on. */
    private readonly timer: TimeoutSlot,
    private readonly streaming?: StreamUse,
  ) {
    this.state = waitingState(source.id);
  }

  get id(): string {
    return this.source.id;
  }

  isDue(now: number): boolean {
    return now >= this.state.nextPollAt && this.streaming?.stream.isLive() !== true;
  }

  /**
   * Last good quotes, polled or streamed, the newer per instrument; aggregation drops the stale
   * ones. While the stream is live, a subscribed instrument's quote holds until the venue says
   * otherwise, so it is current as of the stream's last message.
   */
  lastQuotes(): readonly RawQuote[] {
    if (this.streamed.size === 0) return this.quotes;
    const merged = new Map<string, RawQuote>();
    for (const quote of this.quotes) merged.set(instrumentKey(quote), quote);
    for (const [key, quote] of this.streamed) {
      const polled = merged.get(key);
      if (polled === undefined || polled.observedAt <= quote.observedAt) merged.set(key, quote);
    }
    const status = this.streaming?.stream.status();
    const liveAt = status?.state === 'live' ? status.lastMessageAt : undefined;
    if (liveAt === undefined) return [...merged.values()];
    return [...merged.values()].map((quote) =>
      this.subscribed.has(instrumentKey(quote)) && quote.observedAt < liveAt
        ? { ...quote, observedAt: liveAt }
        : quote,
    );
  }

  snapshot(): VenueState {
    const stream = this.streaming?.stream.status();
    return { ...this.state, transport: stream?.state === 'live' ? 'stream' : 'rest', stream };
  }

  /** Polls now and then whenever due, telling `listener` after each attempt. */
  start(listener: PollListener): void {
    this.listener = listener;
    this.schedule();
  }

  /** No more polls; an attempt in flight finishes without telling anyone. */
  stop(): void {
    this.listener = undefined;
    this.timer.clear();
    this.streaming?.stream.stop();
  }

  /** Joins the attempt in flight, or polls now if the venue is due; otherwise resolves at once. */
  pollIfDue(now: number = Date.now()): Promise<void> {
    if (this.inFlight !== undefined) return this.inFlight;
    if (!this.isDue(now)) return Promise.resolve();
    this.timer.clear();
    this.inFlight = this.poll(Date.now).then((change) => {
      this.inFlight = undefined;
      this.listener?.(this, change);
      if (this.listener !== undefined) {
        this.startStream();
        this.schedule();
      }
    });
    return this.inFlight;
  }

  private schedule(): void {
    // while the stream is live, look again after one interval; it also wakes us when it drops
    const delay =
      this.streaming?.stream.isLive() === true
        ? this.intervalMs
        : Math.max(0, this.state.nextPollAt - Date.now());
    this.timer.set(delay, () => {
      // a timer may fire a millisecond early by the wall clock: wait again rather than stop
      if (this.isDue(Date.now())) void this.pollIfDue();
      else this.schedule();
    });
  }

  /** After the first good snapshot: subscribe to the catalogue instruments it lists. */
  private startStream(): void {
    const streaming = this.streaming;
    if (streaming === undefined || streaming.stream.state !== 'idle') return;
    if (this.state.status !== 'ok') return;
    const instruments = new Map<string, StreamInstrument>();
    for (const quote of this.quotes) {
      if (streaming.symbols.has(quote.symbol)) {
        instruments.set(instrumentKey(quote), { symbol: quote.symbol, quote: quote.quote });
      }
    }
    if (instruments.size === 0) return;
    this.subscribed = new Set(instruments.keys());
    streaming.stream.start([...instruments.values()], {
      quotes: (quotes) => {
        this.onStreamed(quotes);
      },
      state: (state) => {
        this.onStreamState(state);
      },
    });
  }

  private onStreamed(quotes: readonly RawQuote[]): void {
    let changed = 0;
    for (const quote of quotes) {
      const key = instrumentKey(quote);
      if (!this.subscribed.has(key)) continue;
      this.streamed.set(key, quote);
      changed += 1;
    }
    if (changed === 0) return;
    const before = this.state.status;
    this.state = {
      ...this.state,
      status: 'ok',
      lastSuccessAt: Date.now(),
      consecutiveFailures: 0,
      instruments: Math.max(this.quotes.length, this.streamed.size),
    };
    this.listener?.(this, { before, after: 'ok' });
  }

  private onStreamState(state: StreamState): void {
    const status = this.state.status;
    this.listener?.(this, { before: status, after: status, stream: state });
    if (this.listener === undefined) return;
    // down or quiet: REST takes over at once, at the venue's own pace
    if (state !== 'live' && state !== 'connecting') void this.pollIfDue();
    this.schedule();
  }

  /** Polls the venue; never throws. Returns the status before and after, for logging. */
  async poll(
    now: () => number,
  ): Promise<{ readonly before: VenueStatus; readonly after: VenueStatus }> {
    const before = this.state.status;
    const startedAt = now();
    try {
      const quotes = await this.source.fetchQuotes();
      const finishedAt = now();
      this.quotes = quotes;
      this.state = {
        ...this.state,
        status: 'ok',
        lastAttemptAt: startedAt,
        lastSuccessAt: finishedAt,
        latencyMs: finishedAt - startedAt,
        consecutiveFailures: 0,
        nextPollAt: startedAt + this.intervalMs,
        instruments: quotes.length,
      };
    } catch (error) {
      const finishedAt = now();
      const failures = this.state.consecutiveFailures + 1;
      const rateLimited = error instanceof VenueError && error.kind === 'rate_limited';
      const backoff = backoffDelay(failures - 1, {
        baseMs: this.intervalMs,
        maxMs: MAX_BACKOFF_MS,
      });
      const retryAfter = error instanceof VenueError ? (error.retryAfterMs ?? 0) : 0;
      this.state = {
        ...this.state,
        status: rateLimited ? 'rate_limited' : 'failing',
        lastAttemptAt: startedAt,
        latencyMs: finishedAt - startedAt,
        consecutiveFailures: failures,
        lastError: {
          kind: error instanceof VenueError ? error.kind : 'unexpected',
          message: remoteText(error),
          at: finishedAt,
        },
        nextPollAt: finishedAt + Math.max(backoff, Math.min(retryAfter, MAX_RETRY_AFTER_MS)),
      };
    }
    return { before, after: this.state.status };
  }
}

function instrumentKey(quote: { readonly symbol: string; readonly quote: string }): string {
  return `${quote.symbol}/${quote.quote}`;
}
