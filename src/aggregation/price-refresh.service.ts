import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { hostname } from 'node:os';
import { AssetCatalogue } from '../assets/asset-catalogue.js';
import type { Backoff } from '../common/backoff.js';
import { ScheduledTimeout } from '../common/timeout-slot.js';
import { MARKETS_SETTINGS, type MarketsSettings } from '../markets/markets.settings.js';
import { PRICE_SOURCES, type PriceSource, type UpdateRule } from '../markets/price-source.js';
import { aggregate, type PricingPolicy, type RoundResult } from './aggregate.js';
import { PRICING_SETTINGS, type PricingSettings } from './pricing.settings.js';
import { nextSnapshot, type PriceSnapshot } from './price-snapshot.js';
import { POLLING_ELECTION, type PollingElection } from './polling-election.js';
import { SNAPSHOT_STORE, type SnapshotStore } from './snapshot-store.js';
import {
  SOURCE_REPORT_EVERY_MS,
  SOURCE_REPORT_STORE,
  buildSourceReport,
  noReport,
  type SourceReport,
  type SourceReportStore,
} from './source-report.js';
import { VenueStream } from '../markets/venue-stream.js';
import { VenuePoller, type PollChange, type VenueState } from './venue-poller.js';
import { remoteText } from '../common/remote-text.js';

/** A stream's reconnection delays while reconnections fail. */
const STREAM_RECONNECT: Backoff = { baseMs: 1000, maxMs: 60_000 };

/** Quotes arriving within this window are aggregated together: at most ~10 aggregations a second. */
export const AGGREGATION_COALESCE_MS = 100;

/** The last aggregation as /v1/sources explains it, with every venue's current state. */
export interface RoundReport {
  readonly asOf: number;
  readonly result: RoundResult;
  readonly venues: readonly VenueState[];
}

/**
 * The price flow. Every venue polls itself on its own clock (its own pace, time-out and back-off,
 * see VenuePoller); its quotes are aggregated as soon as they arrive (changes within
 * AGGREGATION_COALESCE_MS coalesced), and again the moment a quote goes stale. No venue ever
 * waits for another, and requests never trigger any of it. With several instances (REDIS_URL)
 * only the one the PollingElection picks polls and publishes to the shared snapshot store, and
 * publishes its venues' report for the others' /v1/sources every SOURCE_REPORT_EVERY_MS.
 * Its timers (`venue-poll:<venue>`, `price-aggregation` and `source-report`) are timeouts in
 * Nest's SchedulerRegistry: listed there, and cleared when the application shuts down.
 */
@Injectable()
export class PriceRefreshService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PriceRefreshService.name);
  private readonly policy: PricingPolicy;
  private readonly pollers: readonly VenuePoller[];
  private running = false;
  /** The aggregation in flight or last finished; the next one is chained after it. */
  private aggregation: Promise<PriceSnapshot | undefined> = Promise.resolve(undefined);
  private readonly aggregationTimer: ScheduledTimeout;
  /** When the pending aggregation is due. */
  private aggregationAt = Number.POSITIVE_INFINITY;
  private lastAggregatedAt = Number.NEGATIVE_INFINITY;
  private result: { readonly asOf: number; readonly result: RoundResult } | undefined;
  /** This instance, as its report names the poller. */
  private readonly instance: string;
  private readonly served: readonly string[];
  private readonly reportTimer: ScheduledTimeout;
  /** Whether the last publication of the report failed (logged once until one succeeds). */
  private reportFailing = false;
  private readonly publishedListeners = new Set<(snapshot: PriceSnapshot) => void>();

  constructor(
    @Inject(PRICE_SOURCES) sources: readonly PriceSource[],
    @Inject(SNAPSHOT_STORE) private readonly store: SnapshotStore,
    @Inject(PRICING_SETTINGS.token) pricing: PricingSettings,
    @Inject(MARKETS_SETTINGS.token) markets: MarketsSettings,
    catalogue: AssetCatalogue,
    @Inject(POLLING_ELECTION) private readonly election: PollingElection | null,
    scheduler: SchedulerRegistry,
    @Inject(SOURCE_REPORT_STORE) private readonly reports: SourceReportStore | null,
  ) {
    this.policy = pricing;
    this.aggregationTimer = new ScheduledTimeout(scheduler, 'price-aggregation');
    this.reportTimer = new ScheduledTimeout(scheduler, 'source-report');
    this.instance = election?.instance ?? `${hostname()}:${String(process.pid)}`;
    this.served = catalogue.symbols;
    const symbols = new Set(catalogue.symbols);
    this.pollers = sources.map((source) => {
      const intervalMs = Math.max(source.minIntervalMs ?? 0, pricing.refreshMs);
      const timer = new ScheduledTimeout(scheduler, `venue-poll:${source.id}`);
      if (source.stream === undefined) return new VenuePoller(source, intervalMs, timer);
      const stream = new VenueStream(source.stream, {
        quietMs: markets.streamQuietMs,
        connectTimeoutMs: markets.timeoutMs,
        reconnect: STREAM_RECONNECT,
      });
      return new VenuePoller(source, intervalMs, timer, { stream, symbols });
    });
  }

  onApplicationBootstrap(): void {
    if (this.election === null) {
      this.startPolling();
      return;
    }
    // several instances: only the elected one polls and publishes; the others serve its prices
    this.election.start(
      () => {
        this.startPolling();
      },
      () => {
        this.stopPolling();
      },
    );
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopPolling();
    await this.election?.stop();
  }

  private startPolling(): void {
    this.running = true;
    for (const poller of this.pollers) {
      poller.start((polled, change) => {
        this.onPolled(polled, change);
      });
    }
    this.publishReport();
  }

  private stopPolling(): void {
    this.running = false;
    for (const poller of this.pollers) poller.stop();
    this.aggregationTimer.clear();
    this.reportTimer.clear();
  }

  /** While polling with a shared store: publishes the report now and every SOURCE_REPORT_EVERY_MS. */
  private publishReport(): void {
    const reports = this.reports;
    if (reports === null || !this.running) return;
    void reports
      .publish(this.ownReport())
      .then(
        () => {
          this.reportFailing = false;
        },
        (error: unknown) => {
          if (!this.reportFailing) {
            this.logger.warn(`venues' report not published: ${remoteText(error)}`);
          }
          this.reportFailing = true;
        },
      )
      .finally(() => {
        if (!this.running) return;
        this.reportTimer.set(SOURCE_REPORT_EVERY_MS, () => {
          this.publishReport();
        });
      });
  }

  /**
   * Polls every venue that is due now (joining polls already in flight), then aggregates. For
   * tests and the sandbox, which want one deterministic round; the service itself never calls it.
   */
  async refresh(): Promise<PriceSnapshot> {
    await Promise.all(this.pollers.map((poller) => poller.pollIfDue()));
    return this.aggregateNow();
  }

  /** Whether this instance polls the venues (always, unless another instance was elected to). */
  get polling(): boolean {
    return this.running;
  }

  /** Calls `listener` with each snapshot this instance publishes, once published; returns the unsubscribe. */
  onPublished(listener: (snapshot: PriceSnapshot) => void): () => void {
    this.publishedListeners.add(listener);
    return () => {
      this.publishedListeners.delete(listener);
    };
  }

  /** Every venue's current state, before any aggregation too (for metrics). */
  venueStates(): VenueState[] {
    return this.pollers.map((poller) => poller.snapshot());
  }

  /**
   * The venues' report /v1/sources serves: this instance's own while it polls (or when it runs
   * alone), else the one the polling instance published; while none is published, every venue
   * `waiting` and no poller named. Redis unreachable: the 503 `shared_state_unavailable`.
   */
  async sourceReport(): Promise<SourceReport> {
    if (this.running || this.reports === null) return this.ownReport();
    const published = await this.reports.current();
    return (
      published ??
      noReport(
        Date.now(),
        this.pollers.map((poller) => poller.id),
      )
    );
  }

  private ownReport(): SourceReport {
    return buildSourceReport(
      this.instance,
      Date.now(),
      this.venueStates(),
      this.result,
      this.served,
    );
  }

  /** Every venue's current state and what the last aggregation made of its quotes. */
  lastRound(): RoundReport | undefined {
    if (this.result === undefined) return undefined;
    return { ...this.result, venues: this.pollers.map((poller) => poller.snapshot()) };
  }

  private onPolled(poller: VenuePoller, change: PollChange): void {
    if (change.stream !== undefined) {
      const status = poller.snapshot().stream;
      const detail =
        change.stream === 'live' || status?.lastError === undefined
          ? ''
          : ` (${status.lastError.message})`;
      this.logger.log(`${poller.id}: stream ${change.stream}${detail}`);
      // a stream going live or down changes how current its venue's quotes are
      this.requestAggregation(Date.now());
      return;
    }
    if (change.before !== change.after) this.logTransition(poller.snapshot(), change.before);
    if (change.after === 'ok') this.requestAggregation(Date.now());
  }

  /** Aggregates at `at`, or as soon after the last aggregation as coalescing allows. */
  private requestAggregation(at: number): void {
    if (!this.running) return;
    const when = Math.max(at, this.lastAggregatedAt + AGGREGATION_COALESCE_MS);
    if (this.aggregationTimer.pending && this.aggregationAt <= when) return;
    this.aggregationAt = when;
    this.aggregationTimer.set(Math.max(0, when - Date.now()), () => {
      this.aggregateNow().catch((error: unknown) => {
        this.logger.error(`price aggregation failed: ${remoteText(error)}`);
      });
    });
  }

  /** One aggregation of every venue's latest quotes, after any already running. */
  private aggregateNow(): Promise<PriceSnapshot> {
    const next = this.aggregation.catch(() => undefined).then(() => this.runAggregation());
    this.aggregation = next;
    return next;
  }

  private async runAggregation(): Promise<PriceSnapshot> {
    const now = Date.now();
    this.lastAggregatedAt = now;
    const quotes = this.pollers.flatMap((poller) => poller.lastQuotes());
    const result = aggregate(quotes, this.policy, now);
    const snapshot = nextSnapshot(
      await this.store.current(),
      result.outcomes,
      now,
      this.policy.staleMs,
    );
    await this.store.publish(snapshot);
    this.result = { asOf: now, result };
    for (const listener of this.publishedListeners) listener(snapshot);
    const nextExpiry = earliestExpiry(
      [...quotes, ...snapshot.prices.values()],
      now,
      this.policy.staleMs,
    );
    if (nextExpiry !== undefined) this.requestAggregation(nextExpiry);
    return snapshot;
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

/**
 * The first moment after `now` at which one of these observations goes stale: PRICE_STALE_MS
 * after it, or for a push oracle also at the end of its heartbeat.
 */
export function earliestExpiry(
  observations: readonly { readonly observedAt: number; readonly updateRule?: UpdateRule }[],
  now: number,
  staleMs: number,
): number | undefined {
  let earliest: number | undefined;
  for (const { observedAt, updateRule } of observations) {
    const at = Math.min(observedAt, now);
    // one millisecond past the limit: aggregate() keeps a quote exactly at its limit
    for (const limit of [staleMs, updateRule?.heartbeatMs ?? staleMs]) {
      const expiry = at + limit + 1;
      if (expiry > now && (earliest === undefined || expiry < earliest)) earliest = expiry;
    }
  }
  return earliest;
}
