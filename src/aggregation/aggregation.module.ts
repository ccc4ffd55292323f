import { CacheModule, CACHE_MANAGER, type CacheOptions } from '@nestjs/cache-manager';
import { Module } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { Cache } from 'cache-manager';
import { AssetsModule } from '../assets/assets.module.js';
import { MarketsModule } from '../markets/markets.module.js';
import { REDIS_CLIENT, type RedisClient } from '../shared-state/redis-connection.js';
import { POLLING_ELECTION, RedisPollingElection } from './polling-election.js';
import { PriceChanges, SnapshotPriceChanges } from './price-changes.js';
import { PriceMetrics } from './price-metrics.js';
import { PriceRefreshService } from './price-refresh.service.js';
import { PRICING_SETTINGS, type PricingSettings } from './pricing.settings.js';
import { CacheSnapshotStore, CacheSourceReportStore } from './shared-snapshot-store.js';
import { SOURCE_REPORT_STORE, SOURCE_REPORT_TTL_MS } from './source-report.js';
import { SourcesController } from './sources.controller.js';
import { SourcesAnswer } from './sources-answer.js';
import { InMemorySnapshotStore, SNAPSHOT_STORE, type SnapshotStore } from './snapshot-store.js';
import { ScheduledTimeout } from '../common/timeout-slot.js';

/**
 * The cache's Redis store on this instance's one connection. The cache module disconnects its
 * stores when modules are destroyed, before requests in flight have finished; the connection is
 * the shared-state module's to close, after them. `@keyv/redis` is loaded only with REDIS_URL:
 * without it nothing uses it (it brings its own Redis client, about 4 MB of heap).
 */
async function sharedConnectionCache(redis: RedisClient): Promise<CacheOptions> {
  const { default: KeyvRedis, Keyv } = await import('@keyv/redis');
  class SharedConnectionStore extends KeyvRedis<unknown> {
    override disconnect(): Promise<void> {
      return Promise.resolve();
    }
  }
  return { stores: [new Keyv({ store: new SharedConnectionStore(redis) })] };
}

@Module({
  imports: [
    MarketsModule,
    AssetsModule,
    // with REDIS_URL, the cache (the price snapshot, the venues' report) lives in Redis on the shared connection
    CacheModule.registerAsync({
      inject: [REDIS_CLIENT],
      useFactory: (redis: RedisClient | null): CacheOptions | Promise<CacheOptions> =>
        redis === null ? {} : sharedConnectionCache(redis),
    }),
  ],
  controllers: [SourcesController],
  providers: [
    PriceRefreshService,
    SourcesAnswer,
    PriceMetrics,
    {
      provide: SNAPSHOT_STORE,
      inject: [REDIS_CLIENT, CACHE_MANAGER, PRICING_SETTINGS.token],
      useFactory: (redis: RedisClient | null, cache: Cache, pricing: PricingSettings) =>
        redis === null
          ? new InMemorySnapshotStore()
          : new CacheSnapshotStore(cache, pricing.staleMs, () => redis.isReady),
    },
    {
      provide: SOURCE_REPORT_STORE,
      inject: [REDIS_CLIENT, CACHE_MANAGER],
      useFactory: (redis: RedisClient | null, cache: Cache) =>
        redis === null
          ? null
          : new CacheSourceReportStore(cache, SOURCE_REPORT_TTL_MS, () => redis.isReady),
    },
    {
      provide: PriceChanges,
      inject: [PriceRefreshService, SNAPSHOT_STORE, PRICING_SETTINGS.token, SchedulerRegistry],
      useFactory: (
        refresh: PriceRefreshService,
        store: SnapshotStore,
        pricing: PricingSettings,
        scheduler: SchedulerRegistry,
      ) =>
        new SnapshotPriceChanges(
          refresh,
          store,
          pricing.staleMs,
          new ScheduledTimeout(scheduler, 'price-changes-read'),
        ),
    },
    {
      provide: POLLING_ELECTION,
      inject: [REDIS_CLIENT, SchedulerRegistry],
      useFactory: (redis: RedisClient | null, scheduler: SchedulerRegistry) =>
        redis === null ? null : new RedisPollingElection(redis, scheduler),
    },
  ],
  exports: [SNAPSHOT_STORE, PriceRefreshService, SourcesAnswer, PriceChanges],
})
export class AggregationModule {}
