import type { Channel } from '@x402/evm/batch-settlement/server';

/**
 * A channel hold that outlives the process taking it: its pendingId starts with this (a refund
 * out on chain, BatchClaims). Any other hold is a request's reservation, which ends with its
 * request and so with its process.
 */
export const LASTING_HOLD = 'refund:';

/** The fields a request's reservation sets or clears, and nothing a claim or a restart reads. */
const RESERVATION_FIELDS: ReadonlySet<string> = new Set([
  'pendingRequest',
  'lastRequestTimestamp',
  'signature',
  'signedMaxClaimable',
]);

/**
 * Whether `next` only takes or lets go of a request's reservation on `current`: it changes
 * nothing but the reservation's own fields (the charged total, the on-chain state and the config
 * stay), and neither side is a lasting hold. A store that outlives no request (one process per
 * directory) need not keep such a change: after a restart the record as last charged is the
 * truth, and its signature still covers its charged total.
 */
export function onlyReservation(current: Channel | undefined, next: Channel | undefined): boolean {
  if (current === undefined || next === undefined) return false;
  if (isLasting(current) || isLasting(next)) return false;
  const keys = new Set([...Object.keys(current), ...Object.keys(next)]);
  for (const key of keys) {
    if (RESERVATION_FIELDS.has(key)) continue;
    const before: unknown = current[key as keyof Channel];
    const after: unknown = next[key as keyof Channel];
    if (before === after) continue;
    if (key === 'channelConfig' && JSON.stringify(before) === JSON.stringify(after)) continue;
    return false;
  }
  return true;
}

function isLasting(channel: Channel): boolean {
  return channel.pendingRequest?.pendingId.startsWith(LASTING_HOLD) === true;
}
