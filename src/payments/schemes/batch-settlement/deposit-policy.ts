import type { UsdPrice } from '../../paywall/paid-price.js';
import { usdToAtomic } from '../../paywall/usd-amount.js';

/**
 * How big a deposit the batch offer asks for (`extra.minDeposit`). The official client deposits
 * what the offer announces; without an announcement, 5 calls' worth. Each deposit is a chain
 * transaction the facilitator pays for and about 20 ms of server CPU, so a deposit sized for a
 * few calls costs the seller more than the calls earn; sized for hundreds, it is noise.
 */

/** Calls of the cheapest route the default deposit pays for. */
export const DEPOSIT_CALLS = 500n;

/**
 * The largest deposit the official client makes unless its buyer raises its spend cap:
 * `@x402/evm`'s batch-settlement client caps a deposit at its `depositMultiplier` (default 5)
 * times `spendControls.maxAmountPerPayment` (`@x402/core`'s default: USD 1), so USD 5. Over it,
 * the client deposits USD 5 anyway.
 */
export const CLIENT_DEFAULT_MAX_DEPOSIT: UsdPrice = '$5';

/**
 * The minimum deposit the offer announces on a network whose token has `decimals` decimals, in
 * atomic units: the operator's X402_BATCH_MIN_DEPOSIT (`configured`), else DEPOSIT_CALLS calls of
 * the cheapest paid route, at most CLIENT_DEFAULT_MAX_DEPOSIT. Undefined when nothing is sold.
 * A route dearer than the deposit asks for one call's price (the SDK's rule).
 */
export function minDepositFor(
  configured: UsdPrice | undefined,
  prices: readonly UsdPrice[],
  decimals: number,
): bigint | undefined {
  if (configured !== undefined) return BigInt(usdToAtomic(configured, decimals));
  const atomic = prices.map((price) => BigInt(usdToAtomic(price, decimals)));
  if (atomic.length === 0) return undefined;
  const cheapest = atomic.reduce((low, price) => (price < low ? price : low));
  const cap = BigInt(usdToAtomic(CLIENT_DEFAULT_MAX_DEPOSIT, decimals));
  const sized = cheapest * DEPOSIT_CALLS;
  return sized < cap ? sized : cap;
}
