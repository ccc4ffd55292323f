import { Inject, Logger } from '@nestjs/common';
import type { Network, SchemeNetworkServer } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { EmbeddedFacilitatorClient } from '../../facilitator/embedded-facilitator.js';
import { FACILITATORS, NetworkFacilitators } from '../../facilitator/network-facilitators.js';
import {
  PAYMENT_LEDGER,
  type ClaimResult,
  type PaymentLedger,
} from '../../ledger/payment-ledger.js';
import { PaymentRefusedError } from '../../paywall/offered-requirement.js';
import { asPaymentError, settlementStillUnknown } from '../../paywall/payment-errors.js';
import { PaymentIdentifiers, paymentIdOf } from '../../paywall/payment-identifiers.js';
import { PaymentVerification } from '../../paywall/payment-verification.js';
import {
  SchemeSale,
  SellerScheme,
  type OpenSale,
  type PresentedPayment,
  type SaleContext,
  type SellerSchemePlugin,
} from '../../paywall/seller-scheme.js';
import { ExactSettlement, type PaymentInProgress } from './exact-settlement.js';
import { acceptExactPayment, paymentExpiry, paymentFingerprint } from './payment-acceptance.js';
import { SellerExactScheme } from './seller-exact-scheme.js';
import { SettlementReconciler } from './settlement-reconciler.js';

const CLAIM_REFUSALS: Readonly<Record<Exclude<ClaimResult, 'claimed' | 'uncertain'>, string>> = {
  in_flight: 'payment_in_progress: this payment is already being used by another request',
  settled: 'payment_already_used: this payment has already been settled',
};

/**
 * `exact` on EVM: one EIP-3009 `transferWithAuthorization` of the price per request, settled on
 * chain before the answer goes out. A payment is claimed in the ledger (its identity is what the
 * token makes single-use) so no copy runs concurrently, then verified within
 * X402_VERIFY_TIMEOUT_MS; ExactSettlement settles it once the handler answered.
 */
@SellerScheme()
export class ExactScheme implements SellerSchemePlugin {
  readonly scheme = 'exact';
  readonly offeredToV1 = true;
  private readonly logger = new Logger(ExactScheme.name);

  constructor(
    @Inject(FACILITATORS) private readonly facilitators: NetworkFacilitators,
    @Inject(PAYMENT_LEDGER) private readonly ledger: PaymentLedger,
    private readonly verification: PaymentVerification,
    private readonly identifiers: PaymentIdentifiers,
    private readonly reconciler: SettlementReconciler,
    private readonly settlement: ExactSettlement,
  ) {}

  /** EIP-3009 transfers: EVM networks. */
  serves(network: string): boolean {
    return network.startsWith('eip155:');
  }

  /** With the facilitator in this process, verified with one chain call (SellerExactScheme). */
  serverScheme(network: Network): SchemeNetworkServer {
    const facilitator = this.facilitators.of(network);
    return facilitator instanceof EmbeddedFacilitatorClient
      ? new SellerExactScheme((asset, authorization, signature) =>
          facilitator.wouldTransfer(asset, authorization, signature),
        )
      : new ExactEvmScheme();
  }

  async open(presented: PresentedPayment, context: SaleContext): Promise<OpenSale> {
    const accepted = acceptExactPayment(presented.payload, presented.requirement);
    const { payload } = accepted;
    const fingerprint = paymentFingerprint(accepted);
    const expiresAt = paymentExpiry(accepted);
    const paymentId = paymentIdOf(payload);
    if (paymentId !== undefined) {
      await this.identifiers.claim(
        context,
        { paymentId, fingerprint, signature: accepted.signature, expiresAt },
        () => this.reconciler.holdsUnrecorded(fingerprint, paymentId),
      );
    }
    try {
      const claim = await this.ledger.claim(fingerprint, expiresAt);
      if (
        claim === 'uncertain' ||
        (claim === 'in_flight' && this.reconciler.holdsUnrecorded(fingerprint))
      ) {
        // never a 402 for a payment whose settlement is unknown: it would invite a second one
        throw settlementStillUnknown();
      }
      if (claim !== 'claimed') throw new PaymentRefusedError(CLAIM_REFUSALS[claim]);
      const payment = await this.verified(context, payload, fingerprint);
      const { version } = presented;
      return exactSale(
        { accepted, payment, version, fingerprint, expiresAt, paymentId, context },
        this.settlement,
      );
    } catch (error) {
      await this.identifiers.release(paymentId);
      throw error;
    }
  }

  /** The facilitator's verdict; a refusal, an outage or no answer gives the claim back. */
  private async verified(
    context: SaleContext,
    payload: PresentedPayment['payload'],
    fingerprint: string,
  ): Promise<PaymentInProgress['payment']> {
    try {
      return await this.verification.verify(context, payload);
    } catch (error) {
      await this.ledger.release(fingerprint);
      throw asPaymentError(error, this.logger);
    }
  }
}

/** One `exact` payment between its verification and its settlement. */
export type ExactSale = SchemeSale<PaymentInProgress>;

/** The sale of a verified `exact` payment, settled by ExactSettlement. */
export function exactSale(inProgress: PaymentInProgress, settlement: ExactSettlement): ExactSale {
  const { requirement, authorization } = inProgress.accepted;
  return new SchemeSale(inProgress, requirement, authorization.from, settlement);
}
