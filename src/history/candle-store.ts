import { Inject } from '@nestjs/common';
import {
  REDIS_CLIENT,
  withinDeadline,
  type RedisClient,
} from '../shared-state/redis-connection.js';
import type { Candle, Interval } from './candle.js';

/** A kept start: its closed candle, or null where every venue answered and none had one. */
export type KeptCandle = Candle | null;

/** Closed candles never change: kept by symbol, interval and start, in Redis or this process. */
export interface CandleStore {
  get(
    symbol: string,
    interval: Interval,
    starts: readonly number[],
  ): Promise<Map<number, KeptCandle>>;
  put(symbol: string, interval: Interval, kept: ReadonlyMap<number, KeptCandle>): Promise<void>;
}

/** Most starts kept in memory; the oldest kept are forgotten first. */
export const MAX_KEPT_IN_MEMORY = 200_000;
/** A Redis hash of one symbol and interval lives this long after its last write. */
const REDIS_TTL_SECONDS = 8 * 24 * 3600;

/** In this process, bounded: a Map in insertion order, so the first key is the oldest kept. */
export class MemoryCandleStore implements CandleStore {
  private readonly kept = new Map<string, KeptCandle>();

  constructor(private readonly limit: number = MAX_KEPT_IN_MEMORY) {}

  get size(): number {
    return this.kept.size;
  }

  get(
    symbol: string,
    interval: Interval,
    starts: readonly number[],
  ): Promise<Map<number, KeptCandle>> {
    const found = new Map<number, KeptCandle>();
    for (const start of starts) {
      const candle = this.kept.get(`${symbol}:${interval}:${start}`);
      if (candle !== undefined) found.set(start, candle);
    }
    return Promise.resolve(found);
  }

  put(symbol: string, interval: Interval, kept: ReadonlyMap<number, KeptCandle>): Promise<void> {
    for (const [start, candle] of kept) {
      const key = `${symbol}:${interval}:${start}`;
      this.kept.delete(key);
      this.kept.set(key, candle);
    }
    for (const key of this.kept.keys()) {
      if (this.kept.size <= this.limit) break;
      this.kept.delete(key);
    }
    return Promise.resolve();
  }
}

/**
 * In Redis (REDIS_URL), shared by every instance: one hash per symbol and interval, a field
 * per start. Redis that does not answer in time means nothing is kept: the venues are asked.
 */
export class RedisCandleStore implements CandleStore {
  constructor(private readonly redis: RedisClient) {}

  async get(
    symbol: string,
    interval: Interval,
    starts: readonly number[],
  ): Promise<Map<number, KeptCandle>> {
    const found = new Map<number, KeptCandle>();
    if (starts.length === 0) return found;
    const values = await withinDeadline(
      this.redis.hmGet(hashKey(symbol, interval), starts.map(String)),
    ).catch(() => []);
    for (const [index, value] of values.entries()) {
      const start = starts[index];
      if (typeof value === 'string' && start !== undefined) {
        found.set(start, JSON.parse(value) as KeptCandle);
      }
    }
    return found;
  }

  async put(
    symbol: string,
    interval: Interval,
    kept: ReadonlyMap<number, KeptCandle>,
  ): Promise<void> {
    if (kept.size === 0) return;
    const key = hashKey(symbol, interval);
    const fields = Object.fromEntries(
      [...kept].map(([start, candle]) => [String(start), JSON.stringify(candle)]),
    );
    await withinDeadline(
      this.redis.multi().hSet(key, fields).expire(key, REDIS_TTL_SECONDS).exec(),
    ).catch(() => undefined);
  }
}

function hashKey(symbol: string, interval: Interval): string {
  return `history:candles:${symbol}:${interval}`;
}

export const CANDLE_STORE = Symbol('CandleStore');

/** The store: Redis when configured, this process otherwise. */
export const candleStoreProvider = {
  provide: CANDLE_STORE,
  inject: [REDIS_CLIENT],
  useFactory: (redis: RedisClient | null): CandleStore =>
    redis === null ? new MemoryCandleStore() : new RedisCandleStore(redis),
};

/** Lets a class take the store by its token. */
export const InjectCandleStore = (): ParameterDecorator => Inject(CANDLE_STORE);
