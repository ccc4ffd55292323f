import type { PriceSource, RawQuote } from '../markets/price-source.js';
import { VenueError, type VenueErrorKind } from '../markets/venue-error.js';

/** Longest pause after repeated failures; a rate limit's own Retry-After may be longer. */
const MAX_BACKOFF_MS = 5 * 60 * 1000;
/** Longest Retry-After honoured: one bad header must not switch a venue off indefinitely. */
const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

export type VenueStatus = 'waiting' | 'ok' | 'failing' | 'rate_limited';

/** What is known about one venue, as /v1/sources and the logs tell it. */
export interface VenueState {
  readonly id: string;
  readonly status: VenueStatus;
  readonly lastAttemptAt: number | undefined;
  readonly lastSuccessAt: number | undefined;
  readonly lastError:
    | {
        readonly kind: VenueErrorKind | 'unexpected';
        readonly message: string;
        readonly at: number;
      }
    | undefined;
  readonly latencyMs: number | undefined;
  readonly consecutiveFailures: number;
  readonly nextPollAt: number;
  /** Instruments in its last good snapshot. */
  readonly instruments: number;
}

/** Told after every attempt: the status before and after, and whether new quotes arrived. */
export type PollListener = (
  poller: VenuePoller,
  change: { readonly before: VenueStatus; readonly after: VenueStatus },
) => void;

/**
 * One venue on its own clock: when it is due (its own interval, longer after failures and as
 * long as a rate limit asks), its last good quotes (kept until they go stale), its state. Once
 * started it polls itself on a timer, so no venue ever waits for another.
 */
export class VenuePoller {
  private quotes: readonly RawQuote[] = [];
  private state: VenueState;
  private inFlight: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private listener: PollListener | undefined;

  constructor(
    readonly source: PriceSource,
    /** Time between two polls of this venue: its own pace, never below its minimum interval. */
    private readonly intervalMs: number,
  ) {
    this.state = {
      id: source.id,
      status: 'waiting',
      lastAttemptAt: undefined,
      lastSuccessAt: undefined,
      lastError: undefined,
      latencyMs: undefined,
      consecutiveFailures: 0,
      nextPollAt: 0,
      instruments: 0,
    };
  }

  get id(): string {
    return this.source.id;
  }

  isDue(now: number): boolean {
    return now >= this.state.nextPollAt;
  }

  /** Last good quotes; aggregation drops the stale ones. */
  lastQuotes(): readonly RawQuote[] {
    return this.quotes;
  }

  snapshot(): VenueState {
    return this.state;
  }

  /** Polls now and then whenever due, telling `listener` after each attempt. */
  start(listener: PollListener): void {
    this.listener = listener;
    this.schedule();
  }

  /** No more polls; an attempt in flight finishes without telling anyone. */
  stop(): void {
    this.listener = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Joins the attempt in flight, or polls now if the venue is due; otherwise resolves at once. */
  pollIfDue(now: number = Date.now()): Promise<void> {
    if (this.inFlight !== undefined) return this.inFlight;
    if (!this.isDue(now)) return Promise.resolve();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.inFlight = this.poll(Date.now).then((change) => {
      this.inFlight = undefined;
      this.listener?.(this, change);
      if (this.listener !== undefined) this.schedule();
    });
    return this.inFlight;
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        // a timer may fire a millisecond early by the wall clock: wait again rather than stop
        if (this.isDue(Date.now())) void this.pollIfDue();
        else this.schedule();
      },
      Math.max(0, this.state.nextPollAt - Date.now()),
    );
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
      const backoff = Math.min(this.intervalMs * 2 ** (failures - 1), MAX_BACKOFF_MS);
      const retryAfter = error instanceof VenueError ? (error.retryAfterMs ?? 0) : 0;
      this.state = {
        ...this.state,
        status: rateLimited ? 'rate_limited' : 'failing',
        lastAttemptAt: startedAt,
        latencyMs: finishedAt - startedAt,
        consecutiveFailures: failures,
        lastError: {
          kind: error instanceof VenueError ? error.kind : 'unexpected',
          message: error instanceof Error ? error.message : String(error),
          at: finishedAt,
        },
        nextPollAt: finishedAt + Math.max(backoff, Math.min(retryAfter, MAX_RETRY_AFTER_MS)),
      };
    }
    return { before, after: this.state.status };
  }
}
