import { Module } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { REDIS_CLIENT, type RedisClient } from '../shared-state/redis-connection.js';
import { MemoryThrottlerStorage } from './memory-throttler-storage.js';
import { RATE_LIMIT_STORAGE, RateLimitGuard, RateLimiter } from './rate-limit.guard.js';
import { RateLimitInterceptor } from './rate-limit.interceptor.js';
import { RedisThrottlerStorage } from './redis-throttler-storage.js';

/**
 * Rate limits on free routes and on paid requests that buy nothing (RateLimitGuard, and
 * RateLimitInterceptor for a verified payment), counted in Redis with REDIS_URL.
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
    { provide: APP_INTERCEPTOR, useClass: RateLimitInterceptor },
  ],
  exports: [RateLimiter],
})
export class RateLimitModule {}
