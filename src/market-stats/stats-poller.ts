import { Logger } from '@nestjs/common';
import { backoffDelay } from '../common/backoff.js';
import { remoteText } from '../common/remote-text.js';
import type { MarketStats, StatsFetcher } from './venue-stats.js';

/** Longest pause after repeated failures. */
const MAX_BACKOFF_MS = 5 * 60 * 1000;

/** One venue's last good statistics, by symbol. */
export interface StatsReading {
  readonly at: number;
  readonly bySymbol: ReadonlyMap<string, readonly MarketStats[]>;
}

/**
 * One venue's 24-hour statistics on its own clock: read every `intervalMs` (longer after
 * failures), never two reads at once, the last good reading kept until it goes stale. A venue
 * that hangs is cut off by its connection's time-out and only ever delays itself.
 */
export class StatsPoller {
  private readonly logger = new Logger(StatsPoller.name);
  private reading: StatsReading | undefined;
  private inFlight: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private failures = 0;

  constructor(
    readonly id: string,
    private readonly fetcher: StatsFetcher,
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The last good reading, if any. */
  get latest(): StatsReading | undefined {
    return this.reading;
  }

  start(): void {
    this.running = true;
    void this.poll();
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
      this.reading = { at: this.now(), bySymbol: bySymbol(stats) };
      if (this.failures > 0) this.logger.log(`${this.id}: 24 h statistics read again`);
      this.failures = 0;
    } catch (error) {
      if (this.failures === 0) {
        this.logger.warn(`${this.id}: 24 h statistics not read: ${remoteText(error)}`);
      }
      this.failures += 1;
    }
  }

  private scheduleNext(): void {
    if (!this.running) return;
    clearTimeout(this.timer);
    const delay =
      this.failures === 0
        ? this.intervalMs
        : backoffDelay(this.failures - 1, { baseMs: this.intervalMs, maxMs: MAX_BACKOFF_MS });
    this.timer = setTimeout(() => void this.poll(), delay);
    this.timer.unref();
  }
}

function bySymbol(stats: readonly MarketStats[]): Map<string, MarketStats[]> {
  const grouped = new Map<string, MarketStats[]>();
  for (const entry of stats) {
    const own = grouped.get(entry.symbol);
    if (own === undefined) grouped.set(entry.symbol, [entry]);
    else own.push(entry);
  }
  return grouped;
}
