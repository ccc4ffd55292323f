import { withinDeadline, type RedisClient } from '../shared-state/redis-connection.js';
import type { StatsReading } from './stats-poller.js';
import type { MarketStats } from './venue-stats.js';

const KEY_PREFIX = 'market-stats:v1:';

/**
 * With several instances, the one that polls the venues publishes each venue's latest reading
 * here and the others read them, as the price snapshot is shared: the venues see one client.
 * A reading expires with its staleness, so a dead poller's statistics are never served.
 */
export class SharedStatsReadings {
  constructor(
    private readonly redis: RedisClient,
    private readonly staleMs: number,
  ) {}

  async publish(venue: string, reading: StatsReading): Promise<void> {
    const stats = [...reading.bySymbol.values()].flat();
    const ttlMs = Math.max(1, reading.at + this.staleMs - Date.now());
    await withinDeadline(
      this.redis.set(KEY_PREFIX + venue, JSON.stringify({ at: reading.at, stats }), { PX: ttlMs }),
    );
  }

  /** Every listed venue's published reading, by venue; venues without one are absent. */
  async current(venues: readonly string[]): Promise<Map<string, StatsReading>> {
    const readings = new Map<string, StatsReading>();
    if (venues.length === 0) return readings;
    const values = await withinDeadline(this.redis.mGet(venues.map((venue) => KEY_PREFIX + venue)));
    for (const [index, value] of values.entries()) {
      const venue = venues[index];
      if (venue === undefined || typeof value !== 'string') continue;
      const parsed = JSON.parse(value) as { at: number; stats: MarketStats[] };
      readings.set(venue, { at: parsed.at, bySymbol: groupBySymbol(parsed.stats) });
    }
    return readings;
  }
}

/** A venue's statistics by symbol, in the order listed. */
export function groupBySymbol(stats: readonly MarketStats[]): Map<string, MarketStats[]> {
  const grouped = new Map<string, MarketStats[]>();
  for (const entry of stats) {
    const own = grouped.get(entry.symbol);
    if (own === undefined) grouped.set(entry.symbol, [entry]);
    else own.push(entry);
  }
  return grouped;
}
