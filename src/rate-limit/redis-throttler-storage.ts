import { RedisScript, type RedisClient } from '../shared-state/redis-connection.js';
import {
  rateLimitRecord,
  type RateLimitRecord,
  type RateLimitStorage,
} from './rate-limit-storage.js';

// A fixed window per key: the first hit starts it (PEXPIRE), every hit counts.
const INCREMENT = new RedisScript(`
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {hits, redis.call('PTTL', KEYS[1])}`);

// A paid route's window, a hash of hits and challenges: the first hit starts it; a hit given
// back (hits back to 0) leaves the window where it was.
const COUNT_PAID_ROUTE = new RedisScript(`
local hits = redis.call('HINCRBY', KEYS[1], 'hits', 1)
if ARGV[2] == '1' then redis.call('HINCRBY', KEYS[1], 'challenges', 1) end
local pttl = redis.call('PTTL', KEYS[1])
if pttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); pttl = tonumber(ARGV[1]) end
return {hits, pttl}`);

// A sale: one challenge of the window off its hits, only while one is left (challenges never
// exceed hits); no window, nothing to give back and nothing created.
const GIVE_BACK_CHALLENGE = new RedisScript(`
local challenges = tonumber(redis.call('HGET', KEYS[1], 'challenges') or '0')
if challenges <= 0 then
  return {tonumber(redis.call('HGET', KEYS[1], 'hits') or '0'), redis.call('PTTL', KEYS[1])}
end
redis.call('HINCRBY', KEYS[1], 'challenges', -1)
return {redis.call('HINCRBY', KEYS[1], 'hits', -1), redis.call('PTTL', KEYS[1])}`);

// A sale counted on arrival: its hit off, only if the window is the one it was counted in (it
// has run at least as long as since the count) and a hit that was no challenge is left.
const TAKE_BACK_PAYMENT = new RedisScript(`
local hits = tonumber(redis.call('HGET', KEYS[1], 'hits') or '0')
local challenges = tonumber(redis.call('HGET', KEYS[1], 'challenges') or '0')
local pttl = redis.call('PTTL', KEYS[1])
if pttl > 0 and tonumber(ARGV[1]) - pttl >= tonumber(ARGV[2]) and hits > challenges then
  hits = redis.call('HINCRBY', KEYS[1], 'hits', -1)
end
return {hits, pttl}`);

/**
 * A count Redis cannot give this fast is not waited for: the request goes on unlimited (the
 * limiter logs it) rather than being held by a stalled Redis.
 */
const COUNT_DEADLINE_MS = 250;

/** The rate limits' counts in Redis, so every instance counts a client's requests together. */
export class RedisThrottlerStorage implements RateLimitStorage {
  constructor(private readonly redis: RedisClient) {}

  async increment(
    key: string,
    ttl: number,
    limit: number,
    _block: number,
    name: string,
  ): Promise<RateLimitRecord> {
    const [hits, pttl] = (await INCREMENT.run(
      this.redis,
      [`x402:rate-limit:${name}:${key}`],
      [String(ttl)],
      COUNT_DEADLINE_MS,
    )) as [number, number];
    return rateLimitRecord(hits, pttl > 0 ? pttl : ttl, limit);
  }

  async countPaidRoute(
    key: string,
    ttl: number,
    limit: number,
    challenged: boolean,
  ): Promise<RateLimitRecord> {
    const [hits, pttl] = (await COUNT_PAID_ROUTE.run(
      this.redis,
      [paidRouteKey(key)],
      [String(ttl), challenged ? '1' : '0'],
      COUNT_DEADLINE_MS,
    )) as [number, number];
    return rateLimitRecord(hits, pttl, limit);
  }

  async giveBackChallenge(key: string, limit: number): Promise<RateLimitRecord> {
    const [hits, pttl] = (await GIVE_BACK_CHALLENGE.run(
      this.redis,
      [paidRouteKey(key)],
      [],
      COUNT_DEADLINE_MS,
    )) as [number, number];
    return rateLimitRecord(hits, Math.max(0, pttl), limit);
  }

  async takeBackPayment(
    key: string,
    ttl: number,
    limit: number,
    countedAgoMs: number,
  ): Promise<RateLimitRecord> {
    const [hits, pttl] = (await TAKE_BACK_PAYMENT.run(
      this.redis,
      [paidRouteKey(key)],
      [String(ttl), String(Math.max(0, Math.floor(countedAgoMs)))],
      COUNT_DEADLINE_MS,
    )) as [number, number];
    return rateLimitRecord(hits, Math.max(0, pttl), limit);
  }
}

/** A hash, under a name of its own: the free routes' counts are plain strings. */
function paidRouteKey(key: string): string {
  return `x402:rate-limit:paid-route:${key}`;
}
