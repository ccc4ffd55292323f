import { Injectable, SetMetadata, applyDecorators } from '@nestjs/common';
import type { FacilitatorClient } from '@x402/core/server';
import type {
  Network,
  PaymentPayload,
  PaymentRequirements,
  SchemeNetworkServer,
  SettleResponse,
} from '@x402/core/types';
import type { PaidRoute } from './paid-routes.js';
import type { MeteringScheme } from './metered-sale.js';
import type { ProtocolVersion } from './x402-wire.js';

/**
 * The contract between the paywall and a payment scheme, in money only: a scheme gets the
 * payment, the requirement it answers and a SaleContext, and says what happened. The paywall's
 * PaymentGuard and SettlementInterceptor (through PaymentIntake) alone turn that into HTTP:
 * headers, 402s, 502 `settlement_unknown`. Each scheme's folder implements it, registers with
 * `@SellerScheme()` and is one module in the app.
 */

/** Why a sale ends without an answer sold: the handler threw, or the buyer is gone. */
export type AbandonReason = 'handler_threw' | 'handler_failed';

/**
 * What a scheme may know of the call it sells, whatever carries it (an HTTP request, an MCP
 * tool call): built by the paywall, never a request or reply object.
 */
export interface SaleContext {
  /** The paid route's pattern (`/v1/ticker/:symbol`) or tool (`mcp:get_ticker`), for metrics. */
  readonly route: string;
  /** What a payment-identifier used on this call is bound to (its route and URL, or its tool call). */
  readonly resource: string;
  /** How log lines name the call (`GET /v1/ticker/BTC`). */
  readonly label: string;
  /** Aborts once the buyer can no longer receive the answer (its connection closed first). */
  readonly signal: AbortSignal;
}

/**
 * How a sale ended, as the scheme tells it:
 * - `settled`: the money moved (or is owed, for a channel); the answer goes out with `receipt`;
 * - `refused`: nothing was charged; the answer is a 402 naming `reason` (with `receipt`, when
 *   the settlement that failed should be shown);
 * - `used`: the payment had already paid for an earlier request (found only while settling):
 *   nothing is sold now; the answer is a 402 whose error is `reason` as given;
 * - `unknown`: the money may have moved; the answer is 502 `settlement_unknown` naming
 *   `transaction`, with `message` when the scheme has more to tell the buyer.
 *
 * A fault where nothing was charged and nothing is refused (the buyer gone, a facilitator or
 * shared store unreachable) is thrown as an ApiError instead.
 */
export type SaleOutcome =
  | { readonly kind: 'settled'; readonly receipt: SettleResponse }
  | { readonly kind: 'refused'; readonly reason: string; readonly receipt?: SettleResponse }
  | { readonly kind: 'used'; readonly reason: string }
  | {
      readonly kind: 'unknown';
      readonly transaction: string | undefined;
      readonly reason: string;
      readonly message?: string;
    };

/** A payment-identifier bound to a sale's payment: its answer, once sold, is kept under it. */
export interface IdentifiedSale {
  readonly paymentId: string;
  /** The scheme's name for the payment, as the id's binding holds it. */
  readonly fingerprint: string;
}

/**
 * A payment a scheme accepted, claimed and verified for one call, waiting for the handler.
 * Exactly one of `close` or `abandon` runs.
 */
export interface OpenSale {
  /** The offered requirement the payment answers (the service's own object). */
  readonly requirement: PaymentRequirements;
  /** Who pays (an address on the requirement's network), for the access log. */
  readonly payer: string;
  /** The x402 version the buyer paid with: its receipt is written in that version. */
  readonly version: ProtocolVersion;
  /** The payment-identifier the buyer sent with it, if any. */
  readonly identified: IdentifiedSale | undefined;
  /** The handler answered `body`: settle (or record what is owed) and say how it went. */
  close(body: unknown): Promise<SaleOutcome>;
  /** The handler failed or the buyer left: nothing is sold, what the sale reserved is given back. */
  abandon(reason: AbandonReason): Promise<void>;
}

/** A decoded payment header, in its v2 form, with the offer its `accepted` matched. */
export interface PresentedPayment {
  readonly payload: PaymentPayload;
  readonly version: ProtocolVersion;
  /** The route's own offer (never the client's copy), of this scheme. */
  readonly requirement: PaymentRequirements;
}

/** A payment scheme the service sells with. */
export interface SellerSchemePlugin {
  /** The x402 scheme id (`exact`), as offers and payloads name it. */
  readonly scheme: string;
  /** Whether v1 clients (`X-PAYMENT`, `x402-fetch` 1.x) are offered it in the 402 body. */
  readonly offeredToV1: boolean;
  /**
   * Whether it sells on `network` (a CAIP-2 id): one scheme id may have a plug-in per network
   * family (`exact` on `eip155:*` and on `solana:*`), and each offer goes to the one serving it.
   */
  serves(network: string): boolean;
  /** The SDK's server side of the scheme on `network`: prices offers, checks requirements. */
  serverScheme(network: Network): SchemeNetworkServer;
  /**
   * A facilitator of the scheme's own, when the configured one does not facilitate it (a
   * scheme settled in this process); undefined: the configured facilitator does.
   */
  ownFacilitator?(): FacilitatorClient;
  /**
   * Accepts a presented payment only in exactly the offered shape, claims it so no copy runs
   * concurrently, and verifies it (PaymentVerification). Throws otherwise: PaymentRefusedError
   * (a 402 with the reason, nothing charged), MalformedPaymentError (400), AnswerAlreadySold (a
   * payment-identifier retry of an answer sold before), an ApiError (409, 502
   * `settlement_unknown`, 503).
   */
  open(presented: PresentedPayment, context: SaleContext): Promise<OpenSale>;
  /**
   * Every paid route and its price, before the offers are built: a scheme may size its terms by
   * what is sold (batch-settlement's deposit).
   */
  sells?(routes: readonly PaidRoute[]): void;
  /** Present when the scheme can sell a route per unit delivered (`@Metered`): see metered-sale.ts. */
  readonly metering?: MeteringScheme;
  /** The facilitator confirmed the paid routes: background work may start (claims, say). */
  startSelling?(): void;
  /** The service is stopping: finish or hand over background work (bounded). */
  stopSelling?(): Promise<void>;
}

export const SELLER_SCHEME = Symbol('SellerScheme');

/** Marks a provider as a payment scheme the paywall sells with (see SellerSchemePlugin). */
export function SellerScheme(): ClassDecorator {
  return applyDecorators(Injectable(), SetMetadata(SELLER_SCHEME, true));
}

/** How a scheme ends its sales: settles one whose handler answered, gives back one that failed. */
export interface SaleSettlement<T> {
  close(inProgress: T, body: unknown): Promise<SaleOutcome>;
  giveBack(inProgress: T, reason: AbandonReason): Promise<void>;
}

/** What every scheme's sale in progress carries. */
export interface SaleInProgress {
  readonly context: SaleContext;
  readonly version: ProtocolVersion;
  readonly fingerprint: string;
  readonly paymentId: string | undefined;
}

/** An open sale whose scheme-specific state (`inProgress`) its settlement closes or gives back. */
export class SchemeSale<T extends SaleInProgress> implements OpenSale {
  constructor(
    readonly inProgress: T,
    readonly requirement: PaymentRequirements,
    readonly payer: string,
    private readonly settlement: SaleSettlement<T>,
  ) {}

  get version(): ProtocolVersion {
    return this.inProgress.version;
  }

  get identified(): IdentifiedSale | undefined {
    const { paymentId, fingerprint } = this.inProgress;
    return paymentId === undefined ? undefined : { paymentId, fingerprint };
  }

  close(body: unknown): Promise<SaleOutcome> {
    return this.settlement.close(this.inProgress, body);
  }

  abandon(reason: AbandonReason): Promise<void> {
    return this.settlement.giveBack(this.inProgress, reason);
  }
}
