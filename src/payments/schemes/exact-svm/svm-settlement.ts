import { Inject, Injectable, Logger } from '@nestjs/common';
import type { SettleResponse } from '@x402/core/types';
import { DEADLINE, withDeadline } from '../../../common/deadline.js';
import { remoteText } from '../../../common/remote-text.js';
import { MetricsService } from '../../../metrics/metrics.service.js';
import { PAYMENT_LEDGER, type PaymentLedger } from '../../ledger/payment-ledger.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../../payments.settings.js';
import { PaymentIdentifiers } from '../../paywall/payment-identifiers.js';
import type { SaleInProgress, SaleOutcome, SaleSettlement } from '../../paywall/seller-scheme.js';
import { X402Paywall, type VerifiedPayment } from '../../paywall/x402-paywall.js';
import type { AcceptedSvmPayment } from './svm-acceptance.js';
import { SolanaChainReader, signsThePayment } from './svm-chain.js';
import { SvmReconciler } from './svm-reconciler.js';
import {
  SvmSendingMark,
  landedEarlierReason,
  sentAfterSlotOf,
  type SaleLandingState,
} from './svm-sending-mark.js';

/**
 * The ledger key of a buyer's one Solana payment in flight. The fee payer pays for every
 * transaction it sends, landed or failed: transactions from one account sent at once could each
 * pass simulation on the same balance, and all but one fail on chain at the fee payer's cost.
 * One at a time per buyer (released when the sale ends; expiring with the payment if an
 * instance stops mid-sale), any others are refused before anything is sent.
 */
export const buyerKey = (payer: string): string => `svm-buyer:${payer}`;

/** A Solana payment claimed and verified, waiting for the handler's answer. */
export interface SvmPaymentInProgress extends SaleInProgress {
  readonly accepted: AcceptedSvmPayment;
  readonly payment: VerifiedPayment;
  readonly expiresAt: number;
}

/**
 * Settles a Solana sale after the handler answered: the answer is sold only once the chain shows
 * the fee payer's signature of that very transaction landed; a failed transaction or a refusal is
 * `refused` (nothing moved), anything else `unknown` (held for the reconcilers). The buyer may pay
 * again once the sale is over.
 */
@Injectable()
export class SvmSettlement implements SaleSettlement<SvmPaymentInProgress> {
  private readonly logger = new Logger(SvmSettlement.name);
  private readonly chain: SolanaChainReader | undefined;

  constructor(
    @Inject(PAYMENT_LEDGER) private readonly ledger: PaymentLedger,
    @Inject(PAYMENT_SETTINGS.token) private readonly payments: PaymentConfig,
    private readonly paywall: X402Paywall,
    private readonly reconciler: SvmReconciler,
    private readonly identifiers: PaymentIdentifiers,
    private readonly metrics: MetricsService,
  ) {
    const rpcUrl = payments.solana?.rpcUrl;
    this.chain = rpcUrl === undefined ? undefined : new SolanaChainReader(rpcUrl);
  }

  async close(sale: SvmPaymentInProgress, body: unknown): Promise<SaleOutcome> {
    try {
      return await this.settle(sale, body);
    } finally {
      await this.releaseBuyer(sale);
    }
  }

  private async settle(sale: SvmPaymentInProgress, body: unknown): Promise<SaleOutcome> {
    const mark = await SvmSendingMark.read(this.chain, sale, () => this.giveBack(sale));
    const started = performance.now();
    const { route } = sale.context;
    const seconds = (): number => (performance.now() - started) / 1000;
    let settlement: SettleResponse | typeof DEADLINE;
    try {
      // the facilitator's own wait is X402_SETTLE_TIMEOUT_MS; this bounds a remote one too
      settlement = await withDeadline(
        this.paywall.settle(sale.payment),
        this.payments.settleTimeoutMs + 5000,
      );
    } catch (error) {
      this.metrics.facilitatorError('settle');
      return this.unknown(body, sale, undefined, `settle failed: ${remoteText(error)}`, seconds());
    }
    if (settlement === DEADLINE) {
      return this.unknown(body, sale, undefined, 'no settlement answer in time', seconds());
    }
    const signature = settlement.transaction;
    const signs = signature !== '' && (await signsThePayment(sale.accepted, signature));
    if (!settlement.success && !signs) {
      const reason = settlement.errorReason ?? 'refused';
      this.metrics.settlementNotProven(route, 'refused', reason, seconds());
      await this.giveBack(sale);
      return { kind: 'refused', reason };
    }
    if (!signs) {
      const reason = 'the facilitator named another transaction';
      return this.unknown(body, sale, undefined, reason, seconds());
    }
    // without an RPC, a remote facilitator's word is taken (as on EVM)
    const state =
      this.chain === undefined
        ? settlement.success
          ? 'landed'
          : 'unseen'
        : await this.stateOf(signature, mark);
    if (state === 'landed_earlier') {
      // used before this request sent it: recorded used, nothing sold under its payment-identifier
      this.metrics.settlementNotProven(route, 'refused', 'landed_earlier', seconds());
      await this.ledger.settle(sale.fingerprint, sale.expiresAt);
      await this.identifiers.release(sale.paymentId);
      return { kind: 'used', reason: landedEarlierReason(signature) };
    }
    if (state === 'failed') {
      this.metrics.settlementNotProven(route, 'refused', 'transaction_failed', seconds());
      await this.giveBack(sale);
      return { kind: 'refused', reason: 'transaction_failed' };
    }
    if (state !== 'landed') {
      const reason = settlement.errorReason ?? 'not confirmed';
      return this.unknown(body, sale, signature, reason, seconds());
    }
    try {
      await this.ledger.settle(sale.fingerprint, sale.expiresAt);
    } catch (error) {
      // the price has moved: the client gets what it paid for; the claim stays in flight until
      // the payment expires, and the chain refuses the same transaction again anyway
      this.logger.error(
        `could not record settled payment ${sale.fingerprint}: ${remoteText(error)}`,
      );
    }
    this.metrics.paymentSettled(route, sale.accepted.requirement, seconds());
    const receipt = {
      success: true,
      transaction: signature,
      network: settlement.network,
      payer: sale.accepted.payer,
    };
    return { kind: 'settled', receipt };
  }

  /** Nothing was sold: the transaction may be presented again, and the buyer pay again. */
  async giveBack(sale: SvmPaymentInProgress): Promise<void> {
    try {
      await this.ledger.release(sale.fingerprint);
      await this.identifiers.release(sale.paymentId);
    } finally {
      await this.releaseBuyer(sale);
    }
  }

  /** The buyer may send another payment; a failure leaves the claim to expire. */
  async releaseBuyer(sale: Pick<SvmPaymentInProgress, 'accepted'>): Promise<void> {
    try {
      await this.ledger.release(buyerKey(sale.accepted.payer));
    } catch (error) {
      this.logger.warn(
        `could not release ${buyerKey(sale.accepted.payer)} (it expires): ${remoteText(error)}`,
      );
    }
  }

  private async stateOf(
    signature: string,
    mark: SvmSendingMark | undefined,
  ): Promise<SaleLandingState> {
    try {
      return await (mark as SvmSendingMark).stateOf(signature);
    } catch {
      return 'unseen';
    }
  }

  /**
   * The money may have moved: the claim kept and recorded uncertain in the ledger (every
   * instance answers a retry 502), the chain asked by the reconcilers.
   */
  private async unknown(
    body: unknown,
    sale: SvmPaymentInProgress,
    signature: string | undefined,
    reason: string,
    seconds: number,
  ): Promise<SaleOutcome> {
    const { route } = sale.context;
    this.metrics.settlementNotProven(route, 'unknown', reason, seconds);
    this.logger.error(`Solana settlement outcome unknown for ${sale.fingerprint}: ${reason}`);
    const { requirement, transaction, payer, blockhash } = sale.accepted;
    await this.reconciler.hold({
      kind: 'svm',
      fingerprint: sale.fingerprint,
      expiresAt: sale.expiresAt,
      route,
      version: sale.version,
      payment: { requirement, transaction, payer, blockhash },
      body,
      ...(signature === undefined ? {} : { signature }),
      ...(sale.paymentId === undefined ? {} : { paymentId: sale.paymentId }),
      ...sentAfterSlotOf(sale),
    });
    return { kind: 'unknown', transaction: signature, reason };
  }
}
