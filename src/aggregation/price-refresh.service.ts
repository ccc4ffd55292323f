import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { PRICE_SOURCES, type PriceSource, type RawQuote } from '../markets/price-source.js';
import { VenueError } from '../markets/venue-error.js';
import { aggregate, type PricingPolicy } from './aggregate.js';
import { nextSnapshot, type PriceSnapshot } from './price-snapshot.js';
import { SNAPSHOT_STORE, type SnapshotStore } from './snapshot-store.js';

const REFRESH_INTERVAL = 'price-refresh';

/**
 * The price flow: on a timer, asks every source in parallel, aggregates the round and
 * publishes the snapshot. Requests never trigger it.
 */
@Injectable()
export class PriceRefreshService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PriceRefreshService.name);
  private readonly policy: PricingPolicy;
  private readonly failing = new Set<string>();
  private inFlight: Promise<PriceSnapshot> | undefined;

  constructor(
    @Inject(PRICE_SOURCES) private readonly sources: readonly PriceSource[],
    @Inject(SNAPSHOT_STORE) private readonly store: SnapshotStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly scheduler: SchedulerRegistry,
  ) {
    this.policy = config.pricing;
  }

  onApplicationBootstrap(): void {
    void this.refresh();
    const timer = setInterval(() => void this.refresh(), this.config.pricing.refreshMs);
    this.scheduler.addInterval(REFRESH_INTERVAL, timer);
  }

  onApplicationShutdown(): void {
    if (this.scheduler.doesExist('interval', REFRESH_INTERVAL)) {
      this.scheduler.deleteInterval(REFRESH_INTERVAL);
    }
  }

  /** Runs one round; a round already in flight is joined rather than started twice. */
  refresh(): Promise<PriceSnapshot> {
    this.inFlight ??= this.runRound().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async runRound(): Promise<PriceSnapshot> {
    const quotes = await this.collectQuotes();
    const now = Date.now();
    const outcomes = aggregate(quotes, this.policy, now);
    const snapshot = nextSnapshot(await this.store.current(), outcomes, now, this.policy.staleMs);
    await this.store.publish(snapshot);
    return snapshot;
  }

  private async collectQuotes(): Promise<RawQuote[]> {
    const rounds = await Promise.allSettled(this.sources.map((source) => source.fetchQuotes()));
    return rounds.flatMap((round, index) => {
      const source = this.sources[index] as PriceSource;
      if (round.status === 'fulfilled') {
        this.recordSuccess(source.id, round.value.length);
        return round.value;
      }
      this.recordFailure(source.id, round.reason);
      return [];
    });
  }

  private recordSuccess(id: string, instruments: number): void {
    if (this.failing.delete(id))
      this.logger.log(`${id}: recovered, ${instruments} USD instruments`);
  }

  private recordFailure(id: string, reason: unknown): void {
    const description =
      reason instanceof VenueError ? `${reason.kind}: ${reason.message}` : String(reason);
    if (!this.failing.has(id)) this.logger.warn(`${id}: failing (${description})`);
    this.failing.add(id);
  }
}
