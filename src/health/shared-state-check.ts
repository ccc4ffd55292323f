import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode } from '../common/api-error.js';
import { REDIS_CLIENT, type RedisClient } from '../shared-state/redis-connection.js';
import { READY, type CheckResult, type ReadinessCheck } from './readiness.js';

/** With REDIS_URL, a paid request needs the shared ledger: the connection is up. */
@Injectable()
export class SharedStateCheck implements ReadinessCheck {
  readonly name = 'shared_state';

  constructor(@Inject(REDIS_CLIENT) private readonly redis: RedisClient | null) {}

  /** Only asked where instances share their state. */
  get used(): boolean {
    return this.redis !== null;
  }

  check(): Promise<CheckResult> {
    if (this.redis === null || this.redis.isReady) return Promise.resolve(READY);
    return Promise.resolve({
      ok: false,
      code: ErrorCode.SharedStateUnavailable,
      reason:
        'Redis (REDIS_URL) cannot be reached: paid routes answer 503 until it is back; free routes work',
      retryAfterSeconds: 2,
    });
  }
}
