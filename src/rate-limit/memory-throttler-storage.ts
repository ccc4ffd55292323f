import type { OnApplicationShutdown } from '@nestjs/common';
import {
  rateLimitRecord,
  type RateLimitRecord,
  type RateLimitStorage,
} from './rate-limit-storage.js';

const SWEEP_EVERY_MS = 60_000;

interface Window {
  hits: number;
  /** Hits that were challenges (unpaid requests to paid routes), a sale may give one back. */
  challenges: number;
  startedAt: number;
  endsAt: number;
}

/**
 * The rate limits' counts in this process (no REDIS_URL): a fixed window per key. Written here
 * rather than imported because `@nestjs/throttler` 6 is CommonJS and cannot load Nest 12's
 * ESM-only `@nestjs/common` on Node 20 and under Jest; only its types are used. Each call reads
 * and updates its window synchronously, so concurrent requests cannot interleave within one.
 */
export class MemoryThrottlerStorage implements RateLimitStorage, OnApplicationShutdown {
  private readonly windows = new Map<string, Window>();
  private readonly sweeper = setInterval(() => {
    const now = Date.now();
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
  }, SWEEP_EVERY_MS).unref();

  increment(
    key: string,
    ttl: number,
    limit: number,
    _blockDuration: number,
    name: string,
  ): Promise<RateLimitRecord> {
    return Promise.resolve(this.count(`${name}:${key}`, ttl, limit, false));
  }

  countPaidRoute(
    key: string,
    ttl: number,
    limit: number,
    challenged: boolean,
  ): Promise<RateLimitRecord> {
    return Promise.resolve(this.count(`paid:${key}`, ttl, limit, challenged));
  }

  giveBackChallenge(key: string, limit: number): Promise<RateLimitRecord> {
    const now = Date.now();
    const window = this.windows.get(`paid:${key}`);
    if (window === undefined || window.endsAt <= now) {
      return Promise.resolve(rateLimitRecord(0, 0, limit));
    }
    if (window.challenges > 0) {
      window.challenges -= 1;
      window.hits -= 1;
    }
    return Promise.resolve(rateLimitRecord(window.hits, window.endsAt - now, limit));
  }

  takeBackPayment(
    key: string,
    _ttl: number,
    limit: number,
    countedAgoMs: number,
  ): Promise<RateLimitRecord> {
    const now = Date.now();
    const window = this.windows.get(`paid:${key}`);
    if (window === undefined || window.endsAt <= now) {
      return Promise.resolve(rateLimitRecord(0, 0, limit));
    }
    if (window.startedAt <= now - countedAgoMs && window.hits > window.challenges) window.hits -= 1;
    return Promise.resolve(rateLimitRecord(window.hits, window.endsAt - now, limit));
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweeper);
  }

  private count(id: string, ttl: number, limit: number, challenged: boolean): RateLimitRecord {
    const now = Date.now();
    let window = this.windows.get(id);
    if (window === undefined || window.endsAt <= now) {
      window = { hits: 0, challenges: 0, startedAt: now, endsAt: now + ttl };
      this.windows.set(id, window);
    }
    window.hits += 1;
    if (challenged) window.challenges += 1;
    return rateLimitRecord(window.hits, window.endsAt - now, limit);
  }
}
