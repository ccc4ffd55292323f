import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { PRICE_SOURCES, type PriceSource } from '../markets/price-source.js';
import { aggregate, type PricingPolicy, type RoundResult } from './aggregate.js';
import { nextSnapshot, type PriceSnapshot } from './price-snapshot.js';
import { SNAPSHOT_STORE, type SnapshotStore } from './snapshot-store.js';
import { VenuePoller, type VenueState } from './venue-poller.js';

const REFRESH_INTERVAL = 'price-refresh';

/** The last round as /v1/sources explains it. */
export interface RoundReport {
  readonly asOf: number;
  readonly result: RoundResult;
  readonly venues: readonly VenueState[];
}

/**
 * The price flow: on a timer, polls every venue that is due (each at its own pace, backing
 * off when failing or rate-limited), aggregates everyone's latest quotes and publishes the
 * snapshot. Requests never trigger it.
 */
@Injectable()
export class PriceRefreshService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PriceRefreshService.name);
  private readonly policy: PricingPolicy;
  private readonly pollers: readonly VenuePoller[];
  private inFlight: Promise<PriceSnapshot> | undefined;
  private report: RoundReport | undefined;

  constructor(
    @Inject(PRICE_SOURCES) sources: readonly PriceSource[],
    @Inject(SNAPSHOT_STORE) private readonly store: SnapshotStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly scheduler: SchedulerRegistry,
  ) {
    this.policy = config.pricing;
    this.pollers = sources.map((source) => new VenuePoller(source, source.minIntervalMs ?? 0));
  }

  onApplicationBootstrap(): void {
    this.refreshInBackground();
    const timer = setInterval(() => {
      this.refreshInBackground();
    }, this.config.pricing.refreshMs);
    this.scheduler.addInterval(REFRESH_INTERVAL, timer);
  }

  onApplicationShutdown(): void {
    if (this.scheduler.doesExist('interval', REFRESH_INTERVAL)) {
      this.scheduler.deleteInterval(REFRESH_INTERVAL);
    }
  }

  /** A failed round (a store that cannot publish) is logged; the next tick tries again. */
  private refreshInBackground(): void {
    this.refresh().catch((error: unknown) => {
      this.logger.error(
        `price refresh failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
  }

  /** Runs one round; a round already in flight is joined rather than started twice. */
  refresh(): Promise<PriceSnapshot> {
    this.inFlight ??= this.runRound().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /** Every venue's state and what the last round made of its quotes. */
  lastRound(): RoundReport | undefined {
    return this.report;
  }

  private async runRound(): Promise<PriceSnapshot> {
    await this.pollDueVenues();
    const now = Date.now();
    const quotes = this.pollers.flatMap((poller) => poller.lastQuotes());
    const result = aggregate(quotes, this.policy, now);
    const snapshot = nextSnapshot(
      await this.store.current(),
      result.outcomes,
      now,
      this.policy.staleMs,
    );
    await this.store.publish(snapshot);
    this.report = { asOf: now, result, venues: this.pollers.map((poller) => poller.snapshot()) };
    return snapshot;
  }

  private async pollDueVenues(): Promise<void> {
    const now = Date.now();
    const due = this.pollers.filter((poller) => poller.isDue(now));
    const changes = await Promise.all(
      due.map(async (poller) => ({ poller, ...(await poller.poll(Date.now)) })),
    );
    for (const { poller, before, after } of changes) {
      if (before !== after) this.logTransition(poller.snapshot(), before);
    }
  }

  private logTransition(state: VenueState, before: string): void {
    if (state.status === 'ok') {
      this.logger.log(
        `${state.id}: ${before} → ok, ${state.instruments} instruments in ${state.latencyMs ?? 0} ms`,
      );
      return;
    }
    const error = state.lastError;
    const retryIn = Math.max(0, state.nextPollAt - Date.now());
    this.logger.warn(
      `${state.id}: ${before} → ${state.status} (${error?.kind ?? 'unknown'}: ${error?.message ?? ''}); next try in ${retryIn} ms`,
    );
  }
}
