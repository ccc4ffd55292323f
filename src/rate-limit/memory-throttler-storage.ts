import type { OnApplicationShutdown } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

const SWEEP_EVERY_MS = 60_000;

/**
 * `@nestjs/throttler`'s storage contract in this process (no REDIS_URL): a fixed window per key.
 * Written here rather than imported because `@nestjs/throttler` 6 is CommonJS and cannot load
 * Nest 12's ESM-only `@nestjs/common` on Node 20 and under Jest; only its types are used.
 */
export class MemoryThrottlerStorage implements ThrottlerStorage, OnApplicationShutdown {
  private readonly windows = new Map<string, { hits: number; endsAt: number }>();
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
  ): Promise<ThrottlerStorageRecord> {
    const now = Date.now();
    const id = `${name}:${key}`;
    let window = this.windows.get(id);
    if (window === undefined || window.endsAt <= now) {
      window = { hits: 0, endsAt: now + ttl };
      this.windows.set(id, window);
    }
    window.hits += 1;
    const seconds = Math.max(1, Math.ceil((window.endsAt - now) / 1000));
    const blocked = window.hits > limit;
    return Promise.resolve({
      totalHits: window.hits,
      timeToExpire: seconds,
      isBlocked: blocked,
      timeToBlockExpire: blocked ? seconds : 0,
    });
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweeper);
  }
}
