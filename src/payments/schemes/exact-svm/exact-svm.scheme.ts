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
  SellerScheme,
  type OpenSale,
  type PresentedPayment,
  type SellerSchemePlugin,
} from '../../paywall/seller-scheme.js';
import { X402Paywall, type VerifiedPayment } from '../../paywall/x402-paywall.js';
import { receiptHeader, type ProtocolVersion } from '../../paywall/x402-wire.js';
import { acceptSvmPayment, type AcceptedSvmPayment } from './svm-acceptance.js';
import { SolanaChainReader, signsThePayment } from './svm-chain.js';
import { SvmReconciler } from './svm-reconciler.js';

/** A transaction's blockhash is recent for about a minute; its claim is kept well past that. */
const SVM_PAYMENT_TTL_MS = 5 * 60_000;

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
export class ExactSvmSellerScheme implements SellerSchemePlugin {
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
      const version = presented.version;
      const sale = { accepted, version, fingerprint, expiresAt, paymentId };
      return new SvmSale({ ...sale, payment: await this.verified(request, presented, sale) }, this);
    } catch (error) {
      await this.identifiers.release(paymentId);
      throw error;
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
      throw asPaymentError(error, this.logger);
    }
  }

  /** Settles after the handler answered; see SvmSale. */
  async close(
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
        : await this.stateOf(signature);
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
    await this.ledger.settle(sale.fingerprint, sale.expiresAt);
    this.metrics.paymentSettled(route, sale.accepted.requirement, seconds());
    const [name, value] = receiptHeader(sale.version, {
      success: true,
      transaction: signature,
      network: settlement.network,
      payer: sale.accepted.payer,
    });
    const headers = { [name]: value, 'cache-control': 'private, no-store' };
    if (sale.paymentId !== undefined) {
      await this.identifiers.storeAnswer(sale.paymentId, sale.fingerprint, headers, body);
    }
    void reply.headers(headers);
    return body;
  }

  /** Nothing was sold: the transaction may be presented again. */
  async giveBack(sale: Pick<SvmPaymentInProgress, 'fingerprint' | 'paymentId'>): Promise<void> {
    await this.ledger.release(sale.fingerprint);
    await this.identifiers.release(sale.paymentId);
  }

  private async stateOf(signature: string): Promise<'landed' | 'failed' | 'unseen'> {
    try {
      return await (this.chain as SolanaChainReader).signatureState(signature);
    } catch {
      return 'unseen';
    }
  }

  /** The money may have moved: 502, the claim kept, the chain asked by the reconciler. */
  private unknown(
    body: unknown,
    route: string,
    sale: SvmPaymentInProgress,
    signature: string | undefined,
    reason: string,
    seconds: number,
  ): never {
    this.metrics.settlementNotProven(route, 'unknown', reason, seconds);
    this.logger.error(`Solana settlement outcome unknown for ${sale.fingerprint}: ${reason}`);
    this.reconciler.hold({
      fingerprint: sale.fingerprint,
      expiresAt: sale.expiresAt,
      route,
      payment: sale.accepted,
      signature,
      paymentId: sale.paymentId,
      version: sale.version,
      body,
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

class SvmSale implements OpenSale {
  constructor(
    private readonly inProgress: SvmPaymentInProgress,
    private readonly scheme: ExactSvmSellerScheme,
  ) {}

  get requirement(): PresentedPayment['requirement'] {
    return this.inProgress.accepted.requirement;
  }

  get payer(): string {
    return this.inProgress.accepted.payer;
  }

  close(request: FastifyRequest, reply: FastifyReply, body: unknown): Promise<unknown> {
    return this.scheme.close(request, reply, this.inProgress, body);
  }

  abandon(): Promise<void> {
    return this.scheme.giveBack(this.inProgress);
  }
}
