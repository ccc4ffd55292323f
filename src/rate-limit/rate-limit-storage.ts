import type { ThrottlerStorage } from '@nestjs/throttler';

/** One window's count as `@nestjs/throttler` reports it (seconds, rounded up). */
export type RateLimitRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/**
 * Where the rate limits count: `@nestjs/throttler`'s fixed window per key (free routes), and
 * per address one window for paid routes that also remembers how many of its hits were
 * challenges (unpaid requests, answered 402), so that a sale can give its challenge back.
 */
export interface RateLimitStorage extends ThrottlerStorage {
  /** Counts one request to a paid route; `challenged`: it carried no payment. */
  countPaidRoute(
    key: string,
    ttl: number,
    limit: number,
    challenged: boolean,
  ): Promise<RateLimitRecord>;
  /**
   * A sale: takes one challenge counted in `key`'s current window off its hits, if one is left.
   * Never below zero, never ahead: a sale without a challenge to give back changes nothing.
   */
  giveBackChallenge(key: string, limit: number): Promise<RateLimitRecord>;
  /**
   * A request counted on arrival with a payment turned out a sale: its own hit is taken off,
   * if it was counted in `key`'s current window (`countedAgoMs` ago, windows of `ttl`) and a
   * hit that was no challenge is left. Never below zero, never ahead.
   */
  takeBackPayment(
    key: string,
    ttl: number,
    limit: number,
    countedAgoMs: number,
  ): Promise<RateLimitRecord>;
}

/** The record of a window with `hits` and `msLeft` to run, against `limit`. */
export function rateLimitRecord(hits: number, msLeft: number, limit: number): RateLimitRecord {
  const seconds = Math.max(1, Math.ceil(msLeft / 1000));
  const blocked = hits > limit;
  return {
    totalHits: hits,
    timeToExpire: seconds,
    isBlocked: blocked,
    timeToBlockExpire: blocked ? seconds : 0,
  };
}
