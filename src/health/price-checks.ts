import { Inject, Injectable } from '@nestjs/common';
import { SNAPSHOT_STORE, type SnapshotStore } from '../aggregation/snapshot-store.js';
import { ErrorCode } from '../common/api-error.js';
import { X402Paywall } from '../payments/index.js';
import { READY, type CheckResult, type ReadinessCheck } from './readiness.js';
import { RecentAnswer } from './recent-answer.js';

/** A paid request needs a price to sell: the snapshot has at least one. */
@Injectable()
export class SnapshotCheck implements ReadinessCheck {
  readonly name = 'snapshot';

  /** Probes more often than this share one read of the (shared) snapshot. */
  private readonly recent = new RecentAnswer(1000, () => this.ask());

  constructor(@Inject(SNAPSHOT_STORE) private readonly store: SnapshotStore) {}

  check(): Promise<CheckResult> {
    return this.recent.get();
  }

  private async ask(): Promise<CheckResult> {
    const snapshot = await this.store.current();
    if (snapshot !== undefined && snapshot.prices.size > 0) return READY;
    return {
      ok: false,
      code: ErrorCode.PriceUnavailable,
      reason: 'no prices have been aggregated yet',
      retryAfterSeconds: 1,
    };
  }
}

/** A paid request needs the facilitator: it has confirmed the paid routes. */
@Injectable()
export class FacilitatorCheck implements ReadinessCheck {
  readonly name = 'facilitator';

  constructor(private readonly paywall: X402Paywall) {}

  check(): Promise<CheckResult> {
    if (this.paywall.ready) return Promise.resolve(READY);
    return Promise.resolve({
      ok: false,
      code: ErrorCode.FacilitatorUnavailable,
      reason: 'the payment facilitator has not confirmed the paid routes yet',
      retryAfterSeconds: this.paywall.retryAfterSeconds(),
    });
  }
}
