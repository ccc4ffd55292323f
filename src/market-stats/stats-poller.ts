import { Logger } from '@nestjs/common';
import { backoffDelay } from '../common/backoff.js';
import { remoteText } from '../common/remote-text.js';
import { VenueError } from '../markets/venue-error.js';
import { groupBySymbol } from './shared-stats.js';
import type { MarketStats, StatsFetcher } from './venue-stats.js';

/** Longest pause after repeated failures; a rate limit's own Retry-After may be longer. */
const MAX_BACKOFF_MS = 5 * 60 * 1000;
/** Longest Retry-After honoured: one bad header must not switch a venue off indefinitely. */
const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;
/** How soon an instance that is not reading the venues asks again whether it should. */
const IDLE_CHECK_MS = 1000;

/** One venue's last good statistics, by symbol. */
export interface StatsReading {
  readonly at: number;
  readonly bySymbol: ReadonlyMap<string, readonly MarketStats[]>;
}

/**
 * One venue's 24-hour statistics on its own clock: read every `intervalMs` (longer after
 * failures, and at least as long as a rate limit's Retry-After), never two reads at once, the
 * last good reading kept until it goes stale. A venue that hangs is cut off by its connection's
 * time-out and only ever delays itself. While `active` says no (another instance polls the
 * venues), it reads nothing and asks again a second later.
 */
export class StatsPoller {
  private readonly logger = new Logger(StatsPoller.name);
  private reading: StatsReading | undefined;
  private inFlight: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private failures = 0;
  private retryAfterMs = 0;

  constructor(
    readonly id: string,
    private readonly fetcher: StatsFetcher,
    private readonly intervalMs: number,
    private readonly listener: (reading: StatsReading) => void = () => undefined,
    private readonly active: () => boolean = () => true,
    private readonly now: () => number = Date.now,
  ) {}

  /** The last good reading, if any. */
  get latest(): StatsReading | undefined {
    return this.reading;
  }

  start(): void {
    this.running = true;
    if (this.active()) void this.poll();
    else this.schedule(IDLE_CHECK_MS);
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Reads now, or joins the read in flight. */
  poll(): Promise<void> {
    this.inFlight ??= this.read().finally(() => {
      this.inFlight = undefined;
      this.scheduleNext();
    });
    return this.inFlight;
  }

  private async read(): Promise<void> {
    try {
      const stats = await this.fetcher.fetchStats();
      this.reading = { at: this.now(), bySymbol: groupBySymbol(stats) };
      if (this.failures > 0) this.logger.log(`${this.id}: 24 h statistics read again`);
      this.failures = 0;
      this.retryAfterMs = 0;
      this.listener(this.reading);
    } catch (error) {
      if (this.failures === 0) {
        this.logger.warn(`${this.id}: 24 h statistics not read: ${remoteText(error)}`);
      }
      this.failures += 1;
      this.retryAfterMs =
        error instanceof VenueError ? Math.min(error.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS) : 0;
    }
  }

  private scheduleNext(): void {
    const delay =
      this.failures === 0
        ? this.intervalMs
        : Math.max(
            backoffDelay(this.failures - 1, { baseMs: this.intervalMs, maxMs: MAX_BACKOFF_MS }),
            this.retryAfterMs,
          );
    this.schedule(delay);
  }

  private schedule(delayMs: number): void {
    if (!this.running) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (this.active()) void this.poll();
      else this.schedule(IDLE_CHECK_MS);
    }, delayMs);
    this.timer.unref();
  }
}
