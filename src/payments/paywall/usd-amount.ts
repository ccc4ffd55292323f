import type { UsdPrice } from './paid-price.js';

/** `$0.002` in a token with `decimals` decimals, assuming the token is worth one USD: `2000`. */
export function usdToAtomic(price: UsdPrice, decimals: number): string {
  const match = /^\$(\d+)(?:\.(\d+))?$/.exec(price);
  if (match === null) throw new Error(`"${price}" is not a USD price such as $0.002`);
  const [, whole = '0', fraction = ''] = match;
  if (fraction.length > decimals) {
    throw new Error(`${price} has more decimals than the payment token (${decimals})`);
  }
  const atomic =
    BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0');
  if (atomic === 0n) throw new Error(`${price} is not a positive price`);
  return atomic.toString();
}
