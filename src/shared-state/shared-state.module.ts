import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { SHARED_STATE_SETTINGS, type SharedStateSettings } from './shared-state.settings.js';
import { REDIS_CLIENT, closeRedis, connectRedis, type RedisClient } from './redis-connection.js';

/**
 * Owns the Redis connection several instances share their state through (REDIS_URL), or
 * provides null when there is none and every store stays in this process.
 */
@Global()
@Module({
  providers: [
    {
      provide: REDIS_CLIENT,
      inject: [SHARED_STATE_SETTINGS.token],
      useFactory: (sharedState: SharedStateSettings): Promise<RedisClient | null> =>
        sharedState.redisUrl === undefined
          ? Promise.resolve(null)
          : connectRedis(sharedState.redisUrl),
    },
  ],
  exports: [REDIS_CLIENT],
})
export class SharedStateModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS_CLIENT) private readonly redis: RedisClient | null) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.redis !== null) await closeRedis(this.redis);
  }
}
