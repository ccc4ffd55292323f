import { generatePrivateKey } from 'viem/accounts';
import { SNAPSHOT_STORE, type SnapshotStore } from '../src/aggregation/snapshot-store.js';
import { MarketStatsService } from '../src/market-stats/market-stats.service.js';
import { statsVenue } from '../src/market-stats/stats-venues.js';
import { FakeMarkets } from './support/fake-markets.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { describeWithRedis } from './support/redis-suite.js';
import { startApp, type RunningApp } from './support/test-app.js';

const VENUES = ['coinbase', 'kraken', 'bitstamp', 'okx'] as const;

describeWithRedis('market statistics with several instances', () => {
  let redis: RedisServer;
  const venueSets: FakeMarkets[] = [];
  const instances: RunningApp[] = [];

  /** Requests of the venues' 24-hour statistics an instance's own venues received. */
  const statsAsked = (index: number): number =>
    VENUES.reduce((sum, id) => {
      const paths = new Set(statsVenue(id)?.requests.map((request) => request.path));
      return sum + venueSets[index]!.venue(id).requests.filter((path) => paths.has(path)).length;
    }, 0);

  async function until(condition: () => boolean): Promise<void> {
    for (let attempt = 0; attempt < 200 && !condition(); attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  beforeAll(async () => {
    redis = await startRedisServer();
    for (let index = 0; index < 2; index += 1) {
      const markets = await FakeMarkets.start({ venues: VENUES });
      venueSets.push(markets);
      instances.push(
        await startApp({
          ...markets.env(),
          PRICE_REFRESH_MS: '250',
          REDIS_URL: redis.url,
          // every instance sharing a Redis settles with a key of its own
          X402_SETTLER_PRIVATE_KEY: generatePrivateKey(),
        }),
      );
    }
  }, 120_000);

  afterAll(async () => {
    for (const instance of instances) await instance.close();
    for (const markets of venueSets) await markets.close();
    await redis.stop();
  });

  it('only the polling instance reads the venues; the other serves the same figures', async () => {
    await until(() => statsAsked(0) + statsAsked(1) >= VENUES.length);
    const leader = statsAsked(0) > 0 ? 0 : 1;
    const follower = 1 - leader;
    const stats = (index: number) => instances[index]!.app.get(MarketStatsService);
    await stats(leader).refresh();
    await stats(follower).refresh();
    expect(statsAsked(follower)).toBe(0);
    expect(stats(follower).gathered()).toBe(true);

    const snapshot = await instances[follower]!.app.get<SnapshotStore>(SNAPSHOT_STORE).current();
    const btc = snapshot?.prices.get('BTC');
    expect(btc).toBeDefined();
    const figures = stats(follower).statisticsOf('BTC', btc!.price, snapshot!);
    expect(figures.venues).toBe(VENUES.length);
    expect(figures.high24h).not.toBeNull();
    expect(figures).toEqual(stats(leader).statisticsOf('BTC', btc!.price, snapshot!));
  });
});
