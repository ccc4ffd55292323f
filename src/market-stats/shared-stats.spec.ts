import type { RedisClient } from '../shared-state/redis-connection.js';
import { SharedStatsReadings, groupBySymbol } from './shared-stats.js';
import type { MarketStats } from './venue-stats.js';

/** The two commands used, over a map, recording each SET's expiry. */
class RecordingRedis {
  readonly values = new Map<string, string>();
  readonly expiries = new Map<string, number>();
  set(key: string, value: string, options: { PX: number }): Promise<string> {
    this.values.set(key, value);
    this.expiries.set(key, options.PX);
    return Promise.resolve('OK');
  }
  mGet(keys: string[]): Promise<(string | null)[]> {
    return Promise.resolve(keys.map((key) => this.values.get(key) ?? null));
  }
}

const NOW = Date.now();
const STATS: MarketStats[] = [
  { symbol: 'BTC', quote: 'USDT', last: 100, open: 104, observedAt: NOW },
  { symbol: 'BTC', quote: 'USDC', last: 101, observedAt: NOW },
  { symbol: 'ETH', quote: 'USDT', last: 3, volume: 7, observedAt: NOW },
];

describe('SharedStatsReadings', () => {
  it("gives other instances each venue's reading as published, expiring when it goes stale", async () => {
    const redis = new RecordingRedis();
    const shared = new SharedStatsReadings(redis as unknown as RedisClient, 300_000);
    await shared.publish('okx', { at: NOW, bySymbol: groupBySymbol(STATS) });
    const readings = await shared.current(['okx', 'bybit']);
    expect([...readings.keys()]).toEqual(['okx']);
    expect(readings.get('okx')).toEqual({ at: NOW, bySymbol: groupBySymbol(STATS) });
    const ttl = redis.expiries.get('market-stats:v1:okx') ?? 0;
    expect(ttl).toBeGreaterThan(299_000);
    expect(ttl).toBeLessThanOrEqual(300_000);
  });
});
