/** Exponential back-off: the delay doubles with every failed attempt, from `baseMs` up to `maxMs`. */
export interface Backoff {
  readonly baseMs: number;
  readonly maxMs: number;
  /** Up to this fraction (0–1) of each delay is taken off at random, so retriers spread out. */
  readonly jitter?: number;
}

/** The delay before retry number `attempt` (0 for the first): `baseMs · 2^attempt`, at most `maxMs`. */
export function backoffDelay(
  attempt: number,
  backoff: Backoff,
  random: () => number = Math.random,
): number {
  const delay = Math.min(backoff.baseMs * 2 ** attempt, backoff.maxMs);
  const jitter = backoff.jitter ?? 0;
  return jitter === 0 ? delay : delay * (1 - jitter * random());
}
