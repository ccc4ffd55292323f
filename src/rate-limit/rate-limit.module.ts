import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { REDIS_CLIENT, type RedisClient } from '../shared-state/redis-connection.js';
import { MemoryThrottlerStorage } from './memory-throttler-storage.js';
import { RATE_LIMIT_STORAGE, RateLimitGuard, RateLimiter } from './rate-limit.guard.js';
import { RedisThrottlerStorage } from './redis-throttler-storage.js';

/**
 * Rate limits on free routes and on paid requests that buy nothing (RateLimitGuard; a verified
 * payment's count is taken back when the payment guard says its sale opened), counted in Redis
 * with REDIS_URL.
 */
@Module({
  providers: [
    {
      provide: RATE_LIMIT_STORAGE,
      inject: [REDIS_CLIENT],
      useFactory: (redis: RedisClient | null) =>
        redis === null ? new MemoryThrottlerStorage() : new RedisThrottlerStorage(redis),
    },
    RateLimiter,
    { provide: APP_GUARD, useClass: RateLimitGuard },
  ],
  exports: [RateLimiter],
})
export class RateLimitModule {}
