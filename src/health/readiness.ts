import type { ErrorCode } from '../common/api-error.js';

/** One thing a paid request needs, as the readiness probe asks about it. */
export interface ReadinessCheck {
  /** Named in the 503's detail: `snapshot`, `facilitator`, `chain`, `shutdown`. */
  readonly name: string;
  check(): Promise<CheckResult>;
}

export type CheckResult =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly code: ErrorCode;
      readonly reason: string;
      readonly retryAfterSeconds: number;
    };

/** Every readiness check, in the order their failures are reported; a new dependency joins the list. */
export const READINESS_CHECKS = Symbol('ReadinessChecks');

export const READY: CheckResult = { ok: true };
