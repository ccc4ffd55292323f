import type { ThrottlerStorage } from '@nestjs/throttler';

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;
import { RedisScript, type RedisClient } from '../shared-state/redis-connection.js';

// A fixed window per key: the first hit starts it (PEXPIRE), every hit counts.
const INCREMENT = new RedisScript(`
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {hits, redis.call('PTTL', KEYS[1])}`);

/**
 * A count Redis cannot give this fast is not waited for: the request goes on unlimited (the
 * limiter logs it) rather than being held by a stalled Redis.
 */
const COUNT_DEADLINE_MS = 250;

/** `@nestjs/throttler` storage in Redis, so every instance counts a client's requests together. */
export class RedisThrottlerStorage implements ThrottlerStorage {
  constructor(private readonly redis: RedisClient) {}

  async increment(
    key: string,
    ttl: number,
    limit: number,
    _block: number,
    name: string,
  ): Promise<ThrottlerStorageRecord> {
    const [hits, pttl] = (await INCREMENT.run(
      this.redis,
      [`x402:rate-limit:${name}:${key}`],
      [String(ttl)],
      COUNT_DEADLINE_MS,
    )) as [number, number];
    const seconds = Math.max(1, Math.ceil((pttl > 0 ? pttl : ttl) / 1000));
    return {
      totalHits: hits,
      timeToExpire: seconds,
      isBlocked: hits > limit,
      timeToBlockExpire: hits > limit ? seconds : 0,
    };
  }
}
