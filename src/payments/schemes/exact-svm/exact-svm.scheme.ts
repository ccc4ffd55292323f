import { Inject, Logger } from '@nestjs/common';
import type { SchemeNetworkServer } from '@x402/core/types';
import { ExactSvmScheme } from '@x402/svm/exact/server';
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
import type { VerifiedPayment } from '../../paywall/x402-paywall.js';
import { acceptSvmPayment } from './svm-acceptance.js';
import { SvmReconciler } from './svm-reconciler.js';
import { SvmSettlement, buyerKey, type SvmPaymentInProgress } from './svm-settlement.js';

/** A transaction's blockhash is recent for about a minute; its claim is kept well past that. */
const SVM_PAYMENT_TTL_MS = 5 * 60_000;

const BUYER_BUSY =
  'payment_in_progress: another Solana payment from this account is being settled; send one at a time';

const CLAIM_REFUSALS: Readonly<Record<Exclude<ClaimResult, 'claimed' | 'uncertain'>, string>> = {
  in_flight: 'payment_in_progress: this payment is already being used by another request',
  settled: 'payment_already_used: this payment has already been settled',
};

/**
 * `exact` on Solana (`@x402/svm`): the buyer signs one SPL transfer of the price to the pay-to's
 * token account, the facilitator adds its fee-payer signature and submits it. The transaction is
 * accepted only in exactly the offered shape (svm-acceptance), claimed in the ledger under the
 * buyer's signature (one per transaction: the same transaction never serves twice, across
 * instances), verified, and settled by SvmSettlement after the handler answered.
 */
@SellerScheme()
export class ExactSvmSellerScheme implements SellerSchemePlugin {
  readonly scheme = 'exact';
  readonly offeredToV1 = false;
  private readonly logger = new Logger(ExactSvmSellerScheme.name);

  constructor(
    @Inject(PAYMENT_LEDGER) private readonly ledger: PaymentLedger,
    private readonly verification: PaymentVerification,
    private readonly reconciler: SvmReconciler,
    private readonly identifiers: PaymentIdentifiers,
    private readonly settlement: SvmSettlement,
  ) {}

  serves(network: string): boolean {
    return network.startsWith('solana:');
  }

  /** The SDK's server side: prices in the mint's atomic units, adds the facilitator's fee payer. */
  serverScheme(): SchemeNetworkServer {
    return new ExactSvmScheme();
  }

  async open(presented: PresentedPayment, context: SaleContext): Promise<OpenSale> {
    const accepted = await acceptSvmPayment(presented.payload, presented.requirement);
    const fingerprint = `svm:${accepted.payerSignature}`;
    const expiresAt = Date.now() + SVM_PAYMENT_TTL_MS;
    const paymentId = paymentIdOf(presented.payload);
    const stillUnknown = (): boolean => this.reconciler.holds(fingerprint);
    if (paymentId !== undefined) {
      const signature = accepted.payerSignature;
      await this.identifiers.claim(
        context,
        { paymentId, fingerprint, signature, expiresAt },
        stillUnknown,
      );
    }
    try {
      const claim = await this.ledger.claim(fingerprint, expiresAt);
      if (claim === 'uncertain' || (claim === 'in_flight' && stillUnknown())) {
        throw settlementStillUnknown();
      }
      if (claim !== 'claimed') throw new PaymentRefusedError(CLAIM_REFUSALS[claim]);
      if (!(await this.claimBuyer(fingerprint, accepted.payer, expiresAt))) {
        throw new PaymentRefusedError(BUYER_BUSY);
      }
      const version = presented.version;
      const sale = { accepted, version, fingerprint, expiresAt, paymentId, context };
      const payment = await this.verified(presented, sale);
      return svmSale({ ...sale, payment }, this.settlement);
    } catch (error) {
      await this.identifiers.release(paymentId);
      throw error;
    }
  }

  /** The buyer's one payment in flight; false (the payment's claim given back): another is. */
  private async claimBuyer(
    fingerprint: string,
    payer: string,
    expiresAt: number,
  ): Promise<boolean> {
    let claim: ClaimResult;
    try {
      claim = await this.ledger.claim(buyerKey(payer), expiresAt);
    } catch (error) {
      await this.ledger.release(fingerprint);
      throw error;
    }
    if (claim === 'claimed') return true;
    await this.ledger.release(fingerprint);
    return false;
  }

  /** The facilitator's verdict; a refusal, an outage or no answer gives the claims back. */
  private async verified(
    presented: PresentedPayment,
    sale: Omit<SvmPaymentInProgress, 'payment'>,
  ): Promise<VerifiedPayment> {
    try {
      return await this.verification.verify(sale.context, presented.payload);
    } catch (error) {
      await this.ledger.release(sale.fingerprint);
      await this.settlement.releaseBuyer(sale);
      throw asPaymentError(error, this.logger);
    }
  }
}

/** One Solana payment between its verification and its settlement. */
export type SvmSale = SchemeSale<SvmPaymentInProgress>;

/** The sale of a verified Solana payment, settled (or given back) by SvmSettlement. */
export function svmSale(inProgress: SvmPaymentInProgress, settlement: SvmSettlement): SvmSale {
  const { requirement, payer } = inProgress.accepted;
  return new SchemeSale(inProgress, requirement, payer, settlement);
}
