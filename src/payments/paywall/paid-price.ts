/** A price in USD as x402 writes it, e.g. `$0.002`. */
export type UsdPrice = `$${number}`;

/** Metadata key under which `@Paid` records a route's price. */
export const PAID_PRICE = Symbol('PaidPrice');

/** Metadata key under which `@Metered` marks a route sold per unit delivered, naming the unit. */
export const METERED_UNIT = Symbol('MeteredUnit');
