import type { PaymentRequired } from '@x402/core/types';
import type { PresentedPayment, SaleContext } from './seller-scheme.js';

/**
 * A metered sale: a route sold per unit delivered (a price stream's update), not per request.
 * The buyer's payment covers a budget; nothing is charged until a unit is delivered, and each
 * unit is charged once, durably, before it goes out. A scheme that can meter says so with the
 * optional `metering` capability of SellerSchemePlugin; the 402 of a metered route offers only
 * such schemes.
 */

/** What a metering scheme opened for one buyer: its budget's account, in the scheme's units. */
export interface MeteredAccount {
  /** The account the units are charged to (a payment channel's id), the same across reconnects. */
  readonly accountId: string;
  readonly payer: string;
  readonly network: string;
  /** The charged total and the covered maximum, atomic units, as last read or written. */
  readonly charged: string;
  readonly covered: string;
  /** The cumulative of the account's last metered charge, when its record keeps one. */
  readonly lastCharge: string | undefined;
  /** What that charge paid for (`charge(label)`), when its record keeps it. */
  readonly lastChargeLabel: string | undefined;
  /** Charges one unit (one atomic, durable write), kept with `label`, or says why it cannot. */
  charge(label?: string): Promise<UnitCharge>;
  /** Takes back the unit charged at `cumulative`: it was never delivered. */
  takeBack(cumulative: string): Promise<void>;
  /**
   * Raises the cover with a further payment on the same account (a top-up); throws
   * PaymentRefusedError (402 reason) or MalformedPaymentError (400), nothing charged.
   */
  raise(presented: PresentedPayment): Promise<{ charged: string; covered: string }>;
}

/** One unit's charge as the scheme tells it. */
export type UnitCharge =
  | { readonly kind: 'charged'; readonly cumulative: string }
  | { readonly kind: 'exhausted'; readonly charged: string; readonly covered: string }
  | { readonly kind: 'refused'; readonly reason: string };

/** The capability a scheme has when it can sell a route per unit delivered. */
export interface MeteringScheme {
  /** Who a payment says pays, before anything is verified (for per-payer limits only). */
  payerOf(presented: PresentedPayment): string;
  /**
   * Accepts a payment for a metered route: `presented.requirement.amount` is the budget it
   * covers (already checked: a positive multiple of `unit`, within the operator's cap). Raises
   * the account's cover, charges nothing. Throws as SellerSchemePlugin.open does.
   */
  openMetered(
    presented: PresentedPayment,
    context: SaleContext,
    unit: string,
  ): Promise<MeteredAccount>;
}

/** A unit's charge as the route sees it: when the budget is used up, the next 402's content. */
export type MeteredCharge =
  | { readonly kind: 'charged'; readonly cumulative: string }
  | {
      readonly kind: 'exhausted';
      readonly charged: string;
      readonly covered: string;
      /** What to pay for more (the route's 402, as its PAYMENT-REQUIRED header decodes). */
      readonly required: PaymentRequired;
    }
  | { readonly kind: 'refused'; readonly reason: string };

/** What a metered route gets once the buyer's payment is accepted (MeteredIntake.open). */
export interface MeteredSale {
  readonly accountId: string;
  readonly payer: string;
  readonly network: string;
  /** The price of one unit, atomic units. */
  readonly unitPrice: string;
  readonly charged: string;
  readonly covered: string;
  /** The account's last metered charge when the sale opened (a reconnect's Last-Event-ID check). */
  readonly lastCharge: string | undefined;
  /** What that charge paid for (a symbol's update), when the account's record keeps it. */
  readonly lastChargeLabel: string | undefined;
  /** One unit charged, `label` naming what it pays for (kept as the account's last charge). */
  charge(label?: string): Promise<MeteredCharge>;
  takeBack(cumulative: string): Promise<void>;
  /** A top-up: a PAYMENT-SIGNATURE header on the same account. 402/400 thrown as responses. */
  topUp(header: string): Promise<{ charged: string; covered: string }>;
  /** The sale is over: nothing more is charged on it. */
  end(): void;
}
