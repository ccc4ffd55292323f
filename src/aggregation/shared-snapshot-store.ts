import type { Cache } from 'cache-manager';
import { sharedStateUnavailable, withinDeadline } from '../shared-state/redis-connection.js';
import type { AggregatedPrice } from './aggregate.js';
import type { PriceSnapshot } from './price-snapshot.js';
import type { SnapshotStore } from './snapshot-store.js';
import type { SourceReport, SourceReportStore } from './source-report.js';

const SNAPSHOT_KEY = 'x402:price-snapshot';
const SOURCE_REPORT_KEY = 'x402:source-report';

/**
 * The price snapshot every instance serves, through `@nestjs/cache-manager` on a Redis store
 * (with REDIS_URL set): the polling instance publishes, every instance reads. A snapshot
 * expires PRICE_STALE_MS after it was published, when none of its prices could be served
 * anyway, so a polling instance that stopped leaves no prices behind that are older than that.
 * Reading parses only a snapshot it has not seen before. Redis unreachable, or silent past its
 * command deadline: reading fails with the 503 `shared_state_unavailable`, as the ledger does.
 */
export class CacheSnapshotStore implements SnapshotStore {
  private last: { readonly raw: string; readonly snapshot: PriceSnapshot } | undefined;

  /** `connected`: whether Redis answers now; the cache reads a failure as a miss. */
  constructor(
    private readonly cache: Cache,
    private readonly ttlMs: number,
    private readonly connected: () => boolean,
  ) {}

  async current(): Promise<PriceSnapshot | undefined> {
    const raw = await withinDeadline(this.cache.get<string>(SNAPSHOT_KEY));
    if (raw === undefined) {
      if (!this.connected()) throw sharedStateUnavailable(new Error('Redis connection lost'));
      return undefined;
    }
    if (this.last?.raw === raw) return this.last.snapshot;
    const stored = JSON.parse(raw) as { asOf: number; prices: AggregatedPrice[] };
    const snapshot: PriceSnapshot = {
      asOf: stored.asOf,
      prices: new Map(stored.prices.map((price) => [price.symbol, price])),
    };
    this.last = { raw, snapshot };
    return snapshot;
  }

  async publish(snapshot: PriceSnapshot): Promise<void> {
    const raw = JSON.stringify({ asOf: snapshot.asOf, prices: [...snapshot.prices.values()] });
    await withinDeadline(this.cache.set(SNAPSHOT_KEY, raw, this.ttlMs));
  }
}

/**
 * The polling instance's venues' report, next to the snapshot in the same cache, for the
 * instances that do not poll to serve on /v1/sources. It expires `ttlMs` after it was published,
 * so a poller that stopped leaves no report behind for long. Redis unreachable, or silent past its
 * command deadline: the 503 `shared_state_unavailable`.
 */
export class CacheSourceReportStore implements SourceReportStore {
  constructor(
    private readonly cache: Cache,
    private readonly ttlMs: number,
    private readonly connected: () => boolean,
  ) {}

  async current(): Promise<SourceReport | undefined> {
    const raw = await withinDeadline(this.cache.get<string>(SOURCE_REPORT_KEY));
    if (raw === undefined) {
      if (!this.connected()) throw sharedStateUnavailable(new Error('Redis connection lost'));
      return undefined;
    }
    return JSON.parse(raw) as SourceReport;
  }

  async publish(report: SourceReport): Promise<void> {
    await withinDeadline(this.cache.set(SOURCE_REPORT_KEY, JSON.stringify(report), this.ttlMs));
  }
}
