import { BackgroundTimeout } from '../../../common/timeout-slot.js';
import type { RedisClient } from '../../../shared-state/redis-connection.js';
import { RedisLease } from '../../../shared-state/redis-lease.js';

/** This instance's right to reconcile one uncertain sale, until released or lost. */
export interface ReconcileClaim {
  /** Gives the sale back: another instance may take it at once. */
  release(): Promise<void>;
}

/** Who reconciles which uncertain sale: one instance at a time for each. */
export interface ReconcileClaims {
  /**
   * The claim on the sale `fingerprint`, or undefined while another instance holds it. `lost` is
   * called if a held claim is taken over (this instance was cut off from the shared state).
   */
  take(fingerprint: string, lost: () => void): Promise<ReconcileClaim | undefined>;
}

export const RECONCILE_CLAIMS = Symbol('ReconcileClaims');

/** A claim an instance that dies without releasing loses after this long. */
export const RECONCILE_CLAIM_TTL_MS = 6_000;
const RENEW_EVERY_MS = RECONCILE_CLAIM_TTL_MS / 3;

/** One instance with its own ledger: every sale is its own to reconcile. */
export class LocalReconcileClaims implements ReconcileClaims {
  take(): Promise<ReconcileClaim> {
    return Promise.resolve({ release: () => Promise.resolve() });
  }
}

/** Claims shared through Redis: a lease per sale (`x402:reconcile:<fingerprint>`). */
export class RedisReconcileClaims implements ReconcileClaims {
  constructor(private readonly redis: RedisClient) {}

  async take(fingerprint: string, lost: () => void): Promise<ReconcileClaim | undefined> {
    const lease = new RedisLease(this.redis, {
      key: `x402:reconcile:${fingerprint}`,
      ttlMs: RECONCILE_CLAIM_TTL_MS,
      renewEveryMs: RENEW_EVERY_MS,
      timer: new BackgroundTimeout(),
    });
    if (!(await lease.hold())) return undefined;
    lease.keep({ lost });
    return { release: () => lease.release() };
  }
}
