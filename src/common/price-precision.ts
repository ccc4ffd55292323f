/** Significant digits a served price keeps; venues quote liquid pairs to about this many. */
export const PRICE_SIGNIFICANT_DIGITS = 6;
/** Decimals a price of 1 USD or more keeps at least: whole cents, as venues quote them. */
export const PRICE_MIN_DECIMALS = 2;

/**
 * A price as served: 6 significant digits, and never less than whole cents (91260.27, 3012.46,
 * 142.371, 1.00021, 0.154102, 0.00000984174). Aggregation keeps full precision; only the
 * delivered number is rounded, so floating-point noise of the median never reaches a client.
 */
export function servedPrice(price: number): number {
  if (!Number.isFinite(price) || price === 0) return price;
  const integerDigits = Math.floor(Math.log10(Math.abs(price))) + 1;
  const digits = Math.max(PRICE_SIGNIFICANT_DIGITS, integerDigits + PRICE_MIN_DECIMALS);
  return Number(price.toPrecision(Math.min(digits, 100)));
}
