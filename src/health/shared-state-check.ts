import { Inject, Injectable } from '@nestjs/common';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { remoteText } from '../common/remote-text.js';
import {
  REDIS_CLIENT,
  withinDeadline,
  type RedisClient,
} from '../shared-state/redis-connection.js';
import { READY, type CheckResult, type ReadinessCheck } from './readiness.js';

/** With REDIS_URL, a paid request needs the shared ledger: Redis answers a PING in time. */
@Injectable()
export class SharedStateCheck implements ReadinessCheck {
  readonly name = 'shared_state';

  constructor(@Inject(REDIS_CLIENT) private readonly redis: RedisClient | null) {}

  /** Only asked where instances share their state. */
  get used(): boolean {
    return this.redis !== null;
  }

  async check(): Promise<CheckResult> {
    if (this.redis === null) return READY;
    try {
      if (!this.redis.isReady) throw new Error('not connected');
      await withinDeadline(this.redis.ping());
      return READY;
    } catch (error) {
      const why = error instanceof ApiError ? 'no answer to a PING in time' : remoteText(error);
      return {
        ok: false,
        code: ErrorCode.SharedStateUnavailable,
        reason: `Redis (REDIS_URL) cannot be reached (${why}): paid routes answer 503 until it is back; free routes work`,
        retryAfterSeconds: 2,
      };
    }
  }
}
