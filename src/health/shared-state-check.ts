import { Inject, Injectable } from '@nestjs/common';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { remoteText } from '../common/remote-text.js';
import {
  REDIS_CLIENT,
  withinDeadline,
  type RedisClient,
} from '../shared-state/redis-connection.js';
import { READY, type CheckResult, type ReadinessCheck } from './readiness.js';
import { RecentAnswer } from './recent-answer.js';

/** Probes more often than this share one PING: an unlimited probe cannot load Redis. */
const STATE_CHECK_CACHE_MS = 1000;

/** With REDIS_URL, a paid request needs the shared ledger: Redis answers a PING in time. */
@Injectable()
export class SharedStateCheck implements ReadinessCheck {
  readonly name = 'shared_state';

  private readonly recent = new RecentAnswer(STATE_CHECK_CACHE_MS, () => this.ask());

  constructor(@Inject(REDIS_CLIENT) private readonly redis: RedisClient | null) {}

  /** Only asked where instances share their state. */
  get used(): boolean {
    return this.redis !== null;
  }

  check(): Promise<CheckResult> {
    return this.recent.get();
  }

  private async ask(): Promise<CheckResult> {
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
