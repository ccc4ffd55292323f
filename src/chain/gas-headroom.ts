/**
 * Gas a transaction is sent with beyond what the node estimated. An estimate is exact for the
 * state it ran on, and that state can change before the transaction is mined: a claim round that
 * settles a channel contract's whole token balance away makes the next deposit write a zero
 * balance slot again, ~17,700 gas more than estimated three calls deep, and the deposit runs out
 * of gas. Unused gas is not paid for, so the margin costs nothing when the state holds.
 */

/** At least this much more: one fresh storage write (20,000 + 2,100 cold) a few calls deep. */
export const MIN_GAS_HEADROOM = 25_000n;

/** The gas limit to send with for a node's `estimate`: a quarter more, and MIN_GAS_HEADROOM at least. */
export function withGasHeadroom(estimate: bigint): bigint {
  const quarter = estimate / 4n;
  return estimate + (quarter > MIN_GAS_HEADROOM ? quarter : MIN_GAS_HEADROOM);
}
