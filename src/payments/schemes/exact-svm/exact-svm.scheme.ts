import { Inject, Logger } from '@nestjs/common';
import type { SchemeNetworkServer, SettleResponse } from '@x402/core/types';
import { ExactSvmScheme } from '@x402/svm/exact/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from '../../../common/api-error.js';
import { DEADLINE, withDeadline } from '../../../common/deadline.js';
import { remoteText } from '../../../common/remote-text.js';
import { MetricsService } from '../../../metrics/metrics.service.js';
import {
  PAYMENT_LEDGER,
  type ClaimResult,
  type PaymentLedger,
} from '../../ledger/payment-ledger.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../../payments.settings.js';
import { clientGone } from '../../paywall/client-connection.js';
import {
  asPaymentError,
  challengeResponse,
  routeOf,
  settlementStillUnknown,
  settlementUnknown,
} from '../../paywall/payment-errors.js';
import { PaymentIdentifiers, paymentIdOf } from '../../paywall/payment-identifiers.js';
import { PaymentVerification } from '../../paywall/payment-verification.js';
import {
  SchemeSale,
  SellerScheme,
  type OpenSale,
  type PresentedPayment,
  type SaleSettlement,
  type SellerSchemePlugin,
} from '../../paywall/seller-scheme.js';
import { X402Paywall, type VerifiedPayment } from '../../paywall/x402-paywall.js';
import { receiptHeader, type ProtocolVersion } from '../../paywall/x402-wire.js';
import { acceptSvmPayment, type AcceptedSvmPayment } from './svm-acceptance.js';
import { SolanaChainReader, signsThePayment } from './svm-chain.js';
import {
  SvmSendingMark,
  landedEarlierReason,
  sentAfterSlotOf,
  type SaleLandingState,
} from './svm-sending-mark.js';
import { SvmReconciler } from './svm-reconciler.js';

/** A transaction's blockhash is recent for about a minute; its claim is kept well past that. */
const SVM_PAYMENT_TTL_MS = 5 * 60_000;

/**
 * The ledger key of a buyer's one Solana payment in flight. The fee payer pays for every
 * transaction it sends, landed or failed: transactions from one account sent at once could each
 * pass simulation on the same balance, and all but one fail on chain at the fee payer's cost.
 * One at a time per buyer (released when the sale ends; expiring with the payment if an
 * instance stops mid-sale), any others are refused before anything is sent.
 */
export const buyerKey = (payer: string): string => `svm-buyer:${payer}`;

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
 * instances), verified, and settled after the handler answered; the answer goes out only once the
 * chain shows the fee payer's signature of that very transaction landed.
 */
@SellerScheme()
export class ExactSvmSellerScheme
  implements SellerSchemePlugin, SaleSettlement<SvmPaymentInProgress>
{
  readonly scheme = 'exact';
  readonly offeredToV1 = false;
  private readonly logger = new Logger(ExactSvmSellerScheme.name);
  private readonly chain: SolanaChainReader | undefined;

  constructor(
    @Inject(PAYMENT_LEDGER) private readonly ledger: PaymentLedger,
    @Inject(PAYMENT_SETTINGS.token) private readonly payments: PaymentConfig,
    private readonly verification: PaymentVerification,
    private readonly paywall: X402Paywall,
    private readonly reconciler: SvmReconciler,
    private readonly identifiers: PaymentIdentifiers,
    private readonly metrics: MetricsService,
  ) {
    const rpcUrl = payments.solana?.rpcUrl;
    this.chain = rpcUrl === undefined ? undefined : new SolanaChainReader(rpcUrl);
  }

  serves(network: string): boolean {
    return network.startsWith('solana:');
  }

  /** The SDK's server side: prices in the mint's atomic units, adds the facilitator's fee payer. */
  serverScheme(): SchemeNetworkServer {
    return new ExactSvmScheme();
  }

  async open(request: FastifyRequest, presented: PresentedPayment): Promise<OpenSale> {
    const accepted = await acceptSvmPayment(presented.payload, presented.requirement);
    const fingerprint = `svm:${accepted.payerSignature}`;
    const expiresAt = Date.now() + SVM_PAYMENT_TTL_MS;
    const paymentId = paymentIdOf(presented.payload);
    const stillUnknown = (): boolean => this.reconciler.holds(fingerprint);
    if (paymentId !== undefined) {
      const signature = accepted.payerSignature;
      await this.identifiers.claim(
        request,
        { paymentId, fingerprint, signature, expiresAt },
        stillUnknown,
      );
    }
    try {
      const claim = await this.ledger.claim(fingerprint, expiresAt);
      if (claim === 'uncertain' || (claim === 'in_flight' && stillUnknown())) {
        throw settlementStillUnknown();
      }
      if (claim !== 'claimed')
        return await this.verification.refuse(request, CLAIM_REFUSALS[claim]);
      if (!(await this.claimBuyer(fingerprint, accepted.payer, expiresAt))) {
        return await this.verification.refuse(request, BUYER_BUSY);
      }
      const version = presented.version;
      const sale = { accepted, version, fingerprint, expiresAt, paymentId };
      return svmSale({ ...sale, payment: await this.verified(request, presented, sale) }, this);
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

  /** The buyer may send another payment; a failure leaves the claim to expire. */
  private async releaseBuyer(sale: Pick<SvmPaymentInProgress, 'accepted'>): Promise<void> {
    try {
      await this.ledger.release(buyerKey(sale.accepted.payer));
    } catch (error) {
      this.logger.warn(
        `could not release ${buyerKey(sale.accepted.payer)} (it expires): ${remoteText(error)}`,
      );
    }
  }

  /** The facilitator's verdict; a refusal, an outage or no answer gives the claim back. */
  private async verified(
    request: FastifyRequest,
    presented: PresentedPayment,
    sale: Omit<SvmPaymentInProgress, 'payment'>,
  ): Promise<VerifiedPayment> {
    try {
      return await this.verification.verify(request, presented.payload);
    } catch (error) {
      await this.ledger.release(sale.fingerprint);
      await this.releaseBuyer(sale);
      throw asPaymentError(error, this.logger);
    }
  }

  /** Settles after the handler answered; the buyer may pay again once it is over. */
  async close(
    request: FastifyRequest,
    reply: FastifyReply,
    sale: SvmPaymentInProgress,
    body: unknown,
  ): Promise<unknown> {
    try {
      return await this.settle(request, reply, sale, body);
    } finally {
      await this.releaseBuyer(sale);
    }
  }

  private async settle(
    request: FastifyRequest,
    reply: FastifyReply,
    sale: SvmPaymentInProgress,
    body: unknown,
  ): Promise<unknown> {
    if (clientGone(reply)) {
      await this.giveBack(sale);
      throw new ApiError(
        ErrorCode.ClientClosedRequest,
        'The client closed the connection before settlement; nothing was charged.',
      );
    }
    const mark = await SvmSendingMark.read(this.chain, sale, () => this.giveBack(sale));
    const started = performance.now();
    const route = routeOf(request);
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
      return this.unknown(
        body,
        route,
        sale,
        undefined,
        `settle failed: ${remoteText(error)}`,
        seconds(),
      );
    }
    if (settlement === DEADLINE) {
      return this.unknown(body, route, sale, undefined, 'no settlement answer in time', seconds());
    }
    const signature = settlement.transaction;
    const signs = signature !== '' && (await signsThePayment(sale.accepted, signature));
    if (!settlement.success && !signs) {
      const reason = settlement.errorReason ?? 'refused';
      this.metrics.settlementNotProven(route, 'refused', reason, seconds());
      await this.giveBack(sale);
      throw challengeResponse(
        await this.paywall.challenge(request, `settlement_failed: ${reason}`),
      );
    }
    if (!signs) {
      return this.unknown(
        body,
        route,
        sale,
        undefined,
        'the facilitator named another transaction',
        seconds(),
      );
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
      throw challengeResponse(
        await this.paywall.challenge(request, landedEarlierReason(signature)),
      );
    }
    if (state === 'failed') {
      this.metrics.settlementNotProven(route, 'refused', 'transaction_failed', seconds());
      await this.giveBack(sale);
      throw challengeResponse(
        await this.paywall.challenge(request, 'settlement_failed: transaction_failed'),
      );
    }
    if (state !== 'landed') {
      return this.unknown(
        body,
        route,
        sale,
        signature,
        settlement.errorReason ?? 'not confirmed',
        seconds(),
      );
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
    const [name, value] = receiptHeader(sale.version, {
      success: true,
      transaction: signature,
      network: settlement.network,
      payer: sale.accepted.payer,
    });
    const headers = { [name]: value, 'cache-control': 'private, no-store' };
    return this.identifiers.deliver(reply, sale, headers, body);
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
   * The money may have moved: 502, the claim kept and recorded uncertain in the ledger (every
   * instance answers a retry 502), the chain asked by the reconcilers.
   */
  private async unknown(
    body: unknown,
    route: string,
    sale: SvmPaymentInProgress,
    signature: string | undefined,
    reason: string,
    seconds: number,
  ): Promise<never> {
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
    throw settlementUnknown(signature, reason);
  }
}

/** A Solana payment claimed and verified, waiting for the handler's answer. */
export interface SvmPaymentInProgress {
  readonly accepted: AcceptedSvmPayment;
  readonly payment: VerifiedPayment;
  readonly version: ProtocolVersion;
  readonly fingerprint: string;
  readonly expiresAt: number;
  /** The client's payment-identifier, if it sent one. */
  readonly paymentId: string | undefined;
}

/** One Solana payment between its verification and its settlement. */
export type SvmSale = SchemeSale<SvmPaymentInProgress>;

/** The sale of a verified Solana payment, settled (or given back) by the scheme. */
function svmSale(
  inProgress: SvmPaymentInProgress,
  settlement: SaleSettlement<SvmPaymentInProgress>,
): SvmSale {
  const { requirement, payer } = inProgress.accepted;
  return new SchemeSale(inProgress, requirement, payer, settlement);
}
