import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { ErrorCode } from '../common/api-error.js';
import { READY, type CheckResult, type ReadinessCheck } from './readiness.js';

/**
 * Set the moment the service starts stopping (the signal handler, or the first close hook):
 * readiness answers 503 from then on, while requests in flight finish.
 */
@Injectable()
export class ShutdownState implements ReadinessCheck, OnModuleDestroy {
  readonly name = 'shutdown';
  private stopping = false;

  begin(): void {
    this.stopping = true;
  }

  get isStopping(): boolean {
    return this.stopping;
  }

  onModuleDestroy(): void {
    this.begin();
  }

  check(): Promise<CheckResult> {
    if (!this.stopping) return Promise.resolve(READY);
    return Promise.resolve({
      ok: false,
      code: ErrorCode.ShuttingDown,
      reason: 'the service is stopping; requests in flight are finishing',
      retryAfterSeconds: 5,
    });
  }
}
