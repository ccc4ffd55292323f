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
  /**
   * Charges one unit (one atomic, durable write), keeping `item` (what it paid for and
   * delivered) with it as the account's last charge, or says why it cannot.
   */
  charge(item?: ChargedUnit): Promise<UnitCharge>;
  /** The last charge to re-send free (resend on MeteredSale), marked re-sent in the same write. */
  takeResend(seen: bigint, labels: readonly string[]): Promise<KeptUnit | undefined>;
  /** Takes back exactly that unit's charge (UnitCharge 'charged'): it was never delivered. */
  takeBack(charge: ChargeRef): Promise<void>;
  /**
   * Raises the cover with a further payment on the same account (a top-up); throws
   * PaymentRefusedError (402 reason) or MalformedPaymentError (400), nothing charged.
   */
  raise(presented: PresentedPayment): Promise<{ charged: string; covered: string }>;
  /** Nothing more is charged: background work for the account stops. */
  end(): void;
}

/** What a unit's charge paid for (`label`: a symbol) and delivered (`content`, as sent). */
export interface ChargedUnit {
  readonly label: string;
  readonly content: string;
}

/** The account's last charge, kept with what it delivered, for its one free re-send. */
export interface KeptUnit extends ChargedUnit {
  /** The cumulative after that charge (a stream's event id). */
  readonly cumulative: string;
}

/** One unit's charge: the cumulative after it (its event id) and the charge's own id. */
export interface ChargeRef {
  readonly cumulative: string;
  readonly id: string;
}

/** One unit's charge as the scheme tells it. */
export type UnitCharge =
  | ({ readonly kind: 'charged' } & ChargeRef)
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
  | ({ readonly kind: 'charged' } & ChargeRef)
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
  /** One unit charged, `item` kept with it as the account's last charge. */
  charge(item?: ChargedUnit): Promise<MeteredCharge>;
  /**
   * A reconnect that saw charges up to `seen` (its Last-Event-ID): the account's last charge if it
   * is later, was not re-sent yet and its label is among `labels`, marked re-sent in the same
   * atomic write (so it goes out once); else undefined. Re-sending it charges nothing.
   */
  resend(seen: bigint, labels: readonly string[]): Promise<KeptUnit | undefined>;
  takeBack(charge: ChargeRef): Promise<void>;
  /** A top-up: a PAYMENT-SIGNATURE header on the same account. 402/400 thrown as responses. */
  topUp(header: string): Promise<{ charged: string; covered: string }>;
  /** The sale is over: nothing more is charged on it. */
  end(): void;
}
