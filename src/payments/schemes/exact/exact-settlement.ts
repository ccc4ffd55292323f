import { Inject, Injectable, Logger } from '@nestjs/common';
import { ApiError, ErrorCode } from '../../../common/api-error.js';
import { remoteText } from '../../../common/remote-text.js';
import { MetricsService } from '../../../metrics/metrics.service.js';
import { PAYMENT_LEDGER, type PaymentLedger } from '../../ledger/payment-ledger.js';
import { asPaymentError } from '../../paywall/payment-errors.js';
import { PaymentIdentifiers } from '../../paywall/payment-identifiers.js';
import type { SaleInProgress, SaleOutcome, SaleSettlement } from '../../paywall/seller-scheme.js';
import { SoldAnswers } from './sold-answers.js';
import type { VerifiedPayment } from '../../paywall/x402-paywall.js';
import type { AcceptedPayment } from './payment-acceptance.js';
import { PaymentSettler, type SettlementOutcome } from './payment-settler.js';
import { SettlementReconciler } from './settlement-reconciler.js';

/** An `exact` payment claimed in the ledger and verified, waiting for the handler's answer. */
export interface PaymentInProgress extends SaleInProgress {
  readonly accepted: AcceptedPayment;
  readonly payment: VerifiedPayment;
  readonly expiresAt: number;
}

/**
 * Settles an `exact` sale after the handler succeeded and before any byte of the body is sent:
 * settled (and proven) → `settled` with the receipt; refused → `refused`, payment usable again;
 * handler failed or client gone → nothing settled, payment usable again; outcome unknown →
 * `unknown`, the payment never accepted again and reconciled from the chain in the background.
 */
@Injectable()
export class ExactSettlement implements SaleSettlement<PaymentInProgress> {
  private readonly logger = new Logger(ExactSettlement.name);

  constructor(
    private readonly settler: PaymentSettler,
    private readonly reconciler: SettlementReconciler,
    private readonly sold: SoldAnswers,
    private readonly identifiers: PaymentIdentifiers,
    @Inject(PAYMENT_LEDGER) private readonly ledger: PaymentLedger,
    private readonly metrics: MetricsService,
  ) {}

  async close(inProgress: PaymentInProgress, body: unknown): Promise<SaleOutcome> {
    const { context } = inProgress;
    const started = performance.now();
    const outcome = await this.settler.settle(
      inProgress.payment,
      inProgress.accepted,
      context.signal,
    );
    const { route } = context;
    const seconds = (performance.now() - started) / 1000;
    switch (outcome.kind) {
      case 'abandoned':
        await this.giveBack(inProgress);
        this.logger.warn(
          `${context.label}: client left before the payment was sent; nothing charged`,
        );
        throw new ApiError(
          ErrorCode.ClientClosedRequest,
          'The client closed the connection before the payment was sent; nothing was charged.',
        );
      case 'settled':
        this.metrics.paymentSettled(route, inProgress.accepted.requirement, seconds);
        this.sold.logSale(route, inProgress.accepted, outcome.settlement);
        await this.recordSettled(inProgress);
        return { kind: 'settled', receipt: outcome.settlement };
      case 'refused':
        this.metrics.settlementNotProven(route, 'refused', outcome.reason, seconds);
        await this.giveBack(inProgress);
        return { kind: 'refused', reason: outcome.reason, receipt: outcome.settlement };
      case 'unavailable':
        this.metrics.settlementNotProven(route, 'unavailable', outcome.error.message, seconds);
        this.metrics.facilitatorError('settle');
        await this.giveBack(inProgress);
        throw asPaymentError(outcome.error, this.logger);
      case 'unknown':
        this.metrics.settlementNotProven(route, 'unknown', outcome.reason, seconds);
        await this.holdUncertain(route, inProgress, outcome, body);
        return {
          kind: 'unknown',
          transaction: outcome.trace.transaction ?? outcome.transaction,
          reason: outcome.reason,
        };
    }
  }

  /** Nothing was settled: the payment and its payment-identifier may be used again. */
  async giveBack(inProgress: PaymentInProgress): Promise<void> {
    await this.ledger.release(inProgress.fingerprint);
    await this.identifiers.release(inProgress.paymentId);
  }

  private async recordSettled(inProgress: PaymentInProgress): Promise<void> {
    try {
      await this.ledger.settle(inProgress.fingerprint, inProgress.expiresAt);
    } catch (error) {
      // the price has moved: the client gets what it paid for; the claim stays in flight until
      // the payment expires, and the chain refuses its authorization after that
      this.logger.error(
        `could not record settled payment ${inProgress.fingerprint}: ${remoteText(error)}`,
      );
    }
  }

  /**
   * The money may have moved: the payment is never accepted again, its payment-identifier
   * waits, and the chain is watched (by this instance first, by any other if it goes away); if
   * it shows the payment settled, a retry with the same payment-identifier gets this response.
   */
  private async holdUncertain(
    route: string,
    inProgress: PaymentInProgress,
    outcome: Extract<SettlementOutcome, { kind: 'unknown' }>,
    body: unknown,
  ): Promise<void> {
    const { accepted, fingerprint, expiresAt, paymentId, version } = inProgress;
    this.logger.error(
      `settlement outcome unknown for ${fingerprint}: ${remoteText(outcome.reason)}`,
    );
    const transaction = outcome.trace.transaction ?? outcome.transaction;
    await this.reconciler.hold(
      {
        fingerprint,
        expiresAt,
        route,
        version,
        payment: accepted,
        body,
        ...(paymentId === undefined ? {} : { paymentId }),
        ...(isTransaction(transaction) ? { transaction } : {}),
      },
      outcome.trace,
    );
  }
}

function isTransaction(value: string | undefined): value is `0x${string}` {
  return value !== undefined && /^0x[0-9a-fA-F]{64}$/.test(value);
}
