import { Inject, Injectable, Logger } from '@nestjs/common';
import type { SettleResponse } from '@x402/core/types';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from '../../../common/api-error.js';
import { remoteText } from '../../../common/remote-text.js';
import { MetricsService } from '../../../metrics/metrics.service.js';
import { PAYMENT_LEDGER, type PaymentLedger } from '../../ledger/payment-ledger.js';
import { clientGone, watchDeparture } from '../../paywall/client-connection.js';
import {
  asPaymentError,
  challengeResponse,
  routeOf,
  settlementUnknown,
} from '../../paywall/payment-errors.js';
import { PaymentIdentifiers } from '../../paywall/payment-identifiers.js';
import { SoldAnswers } from './sold-answers.js';
import type { VerifiedPayment } from '../../paywall/x402-paywall.js';
import { X402Paywall } from '../../paywall/x402-paywall.js';
import { receiptHeader, receiptHeaders, type ProtocolVersion } from '../../paywall/x402-wire.js';
import type { AcceptedPayment } from './payment-acceptance.js';
import { PaymentSettler, type SettlementOutcome } from './payment-settler.js';
import { SettlementReconciler } from './settlement-reconciler.js';

/** An `exact` payment claimed in the ledger and verified, waiting for the handler's answer. */
export interface PaymentInProgress {
  readonly accepted: AcceptedPayment;
  readonly payment: VerifiedPayment;
  readonly version: ProtocolVersion;
  readonly fingerprint: string;
  readonly expiresAt: number;
  readonly paymentId: string | undefined;
}

/**
 * Settles an `exact` sale after the handler succeeded and before any byte of the body is sent:
 * settled (and proven) → the body goes out with the receipt; refused → 402, body withheld,
 * payment usable again; handler failed or client gone → nothing settled, payment usable again;
 * outcome unknown → 502 `settlement_unknown`, the payment never accepted again and reconciled
 * from the chain in the background.
 */
@Injectable()
export class ExactSettlement {
  private readonly logger = new Logger(ExactSettlement.name);

  constructor(
    private readonly paywall: X402Paywall,
    private readonly settler: PaymentSettler,
    private readonly reconciler: SettlementReconciler,
    private readonly sold: SoldAnswers,
    private readonly identifiers: PaymentIdentifiers,
    @Inject(PAYMENT_LEDGER) private readonly ledger: PaymentLedger,
    private readonly metrics: MetricsService,
  ) {}

  async close(
    request: FastifyRequest,
    reply: FastifyReply,
    inProgress: PaymentInProgress,
    body: unknown,
  ): Promise<unknown> {
    if (clientGone(reply)) {
      await this.giveBack(inProgress);
      this.logger.warn(
        `${request.method} ${request.url}: client left before settlement; nothing charged`,
      );
      throw new ApiError(
        ErrorCode.ClientClosedRequest,
        'The client closed the connection before settlement; nothing was charged.',
      );
    }
    const started = performance.now();
    const departure = watchDeparture(reply);
    const outcome = await this.settler
      .settle(inProgress.payment, inProgress.accepted, departure.signal)
      .finally(departure.stop);
    const route = routeOf(request);
    const seconds = (performance.now() - started) / 1000;
    switch (outcome.kind) {
      case 'abandoned':
        await this.giveBack(inProgress);
        this.logger.warn(
          `${request.method} ${request.url}: client left before the payment was sent; nothing charged`,
        );
        throw new ApiError(
          ErrorCode.ClientClosedRequest,
          'The client closed the connection before the payment was sent; nothing was charged.',
        );
      case 'settled':
        this.metrics.paymentSettled(route, inProgress.accepted.requirement, seconds);
        this.sold.logSale(route, inProgress.accepted, outcome.settlement);
        return this.deliver(reply, inProgress, outcome.settlement, body);
      case 'refused': {
        this.metrics.settlementNotProven(route, 'refused', outcome.reason, seconds);
        await this.giveBack(inProgress);
        const [name, value] = receiptHeader(inProgress.version, outcome.settlement);
        const challenge = await this.paywall.challenge(
          request,
          `settlement_failed: ${outcome.reason}`,
        );
        throw challengeResponse({ ...challenge, headers: { ...challenge.headers, [name]: value } });
      }
      case 'unavailable':
        this.metrics.settlementNotProven(route, 'unavailable', outcome.error.message, seconds);
        this.metrics.facilitatorError('settle');
        await this.giveBack(inProgress);
        throw asPaymentError(outcome.error, this.logger);
      case 'unknown':
        this.metrics.settlementNotProven(route, 'unknown', outcome.reason, seconds);
        await this.holdUncertain(route, inProgress, outcome, body);
        throw settlementUnknown(outcome.trace.transaction ?? outcome.transaction, outcome.reason);
    }
  }

  /** Nothing was settled: the payment and its payment-identifier may be used again. */
  async giveBack(inProgress: PaymentInProgress): Promise<void> {
    await this.ledger.release(inProgress.fingerprint);
    await this.identifiers.release(inProgress.paymentId);
  }

  private async deliver(
    reply: FastifyReply,
    inProgress: PaymentInProgress,
    settlement: SettleResponse,
    body: unknown,
  ): Promise<unknown> {
    try {
      await this.ledger.settle(inProgress.fingerprint, inProgress.expiresAt);
    } catch (error) {
      // the price has moved: the client gets what it paid for; the claim stays in flight until
      // the payment expires, and the chain refuses its authorization after that
      this.logger.error(
        `could not record settled payment ${inProgress.fingerprint}: ${remoteText(error)}`,
      );
    }
    const headers = receiptHeaders(inProgress.version, settlement);
    return this.identifiers.deliver(reply, inProgress, headers, body);
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
