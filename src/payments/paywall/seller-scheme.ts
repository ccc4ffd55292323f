import { Injectable, SetMetadata, applyDecorators } from '@nestjs/common';
import type { FacilitatorClient } from '@x402/core/server';
import type {
  Network,
  PaymentPayload,
  PaymentRequirements,
  SchemeNetworkServer,
} from '@x402/core/types';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ProtocolVersion } from './x402-wire.js';

/**
 * The contract between the paywall and a payment scheme. The paywall (guard, interceptor, 402,
 * docs) knows only this; each scheme's folder implements it and registers with `@SellerScheme()`
 * plus one line in a module's `providers`.
 */

/** Why a sale ends without an answer sold: the handler threw, or its answer could not go out. */
export type AbandonReason = 'handler_threw' | 'handler_failed';

/**
 * A payment a scheme accepted, claimed and verified for one request, waiting for the handler.
 * Exactly one of `close` or `abandon` runs.
 */
export interface OpenSale {
  /** The offered requirement the payment answers (the service's own object). */
  readonly requirement: PaymentRequirements;
  /** Who pays (an address on the requirement's network), for the access log. */
  readonly payer: string;
  /**
   * The handler answered `body`: settle (or record what is owed), put the receipt headers on
   * `reply` and give back the body to send; throw what to answer instead (a 402 with the reason,
   * a 5xx, 502 `settlement_unknown`). Nothing may be charged for a throw unless the answer says so.
   */
  close(request: FastifyRequest, reply: FastifyReply, body: unknown): Promise<unknown>;
  /** The handler failed: nothing is sold, what the sale reserved is given back. */
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
   * concurrently, and verifies it; throws what to answer otherwise (PaymentRefusedError for a
   * 402 with the reason; an ApiError: 400, 409, 502 `settlement_unknown`, 503).
   */
  open(request: FastifyRequest, presented: PresentedPayment): Promise<OpenSale>;
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
  close(
    request: FastifyRequest,
    reply: FastifyReply,
    inProgress: T,
    body: unknown,
  ): Promise<unknown>;
  giveBack(inProgress: T, reason: AbandonReason): Promise<void>;
}

/** An open sale whose scheme-specific state (`inProgress`) its settlement closes or gives back. */
export class SchemeSale<T> implements OpenSale {
  constructor(
    readonly inProgress: T,
    readonly requirement: PaymentRequirements,
    readonly payer: string,
    private readonly settlement: SaleSettlement<T>,
  ) {}

  close(request: FastifyRequest, reply: FastifyReply, body: unknown): Promise<unknown> {
    return this.settlement.close(request, reply, this.inProgress, body);
  }

  abandon(reason: AbandonReason): Promise<void> {
    return this.settlement.giveBack(this.inProgress, reason);
  }
}
