import {
  Inject,
  Injectable,
  Logger,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { SettleResponse } from '@x402/core/types';
import type { FastifyReply } from 'fastify';
import { catchError, from, mergeMap, type Observable } from 'rxjs';
import { ApiError, ErrorCode } from '../../common/api-error.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { remoteText } from '../../common/remote-text.js';
import { settlementTraces, type SettlementTrace } from '../facilitator/facilitator-client.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../payments.settings.js';
import {
  asPaymentError,
  challengeResponse,
  routeOf,
  settlementUnknown,
  type BatchPaymentInProgress,
  type PaymentInProgress,
  type RequestWithPayment,
} from './payment-errors.js';
import { PAYMENT_LEDGER, type PaymentLedger } from '../ledger/payment-ledger.js';
import {
  PaymentSettler,
  mayHaveSent,
  withDeadline,
  type SettlementOutcome,
} from '../schemes/exact/payment-settler.js';
import { SettlementReconciler } from '../schemes/exact/settlement-reconciler.js';
import { SoldAnswers } from './sold-answers.js';
import { X402Paywall } from './x402-paywall.js';
import {
  CHANNEL_STATE_UNAVAILABLE,
  CHANNEL_STATE_UNCERTAIN,
  chargeRecorded,
} from '../schemes/batch-settlement/seller-batch-scheme.js';
import { receiptHeader } from './x402-wire.js';

/**
 * Settles after the handler succeeded and before any byte of the body is sent: settled (and
 * proven) → the body goes out with the receipt; refused → 402, body withheld, payment usable
 * again; handler failed or client gone → nothing settled, payment usable again; outcome
 * unknown → 502 `settlement_unknown`, the payment never accepted again and reconciled from the
 * chain in the background. A request that reaches it without a verified payment is refused.
 */
@Injectable()
export class SettlementInterceptor implements NestInterceptor {
  private readonly logger = new Logger(SettlementInterceptor.name);
  private readonly settleTimeoutMs: number;

  constructor(
    private readonly paywall: X402Paywall,
    private readonly settler: PaymentSettler,
    private readonly reconciler: SettlementReconciler,
    private readonly sold: SoldAnswers,
    @Inject(PAYMENT_LEDGER) private readonly ledger: PaymentLedger,
    private readonly metrics: MetricsService,
    @Inject(PAYMENT_SETTINGS.token) payments: PaymentConfig,
  ) {
    this.settleTimeoutMs = payments.settleTimeoutMs;
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<RequestWithPayment>();
    const reply = http.getResponse<FastifyReply>();
    const batch = request.x402BatchPayment;
    if (batch !== undefined) {
      return next.handle().pipe(
        catchError(async (error: unknown) => {
          await this.giveBackBatch(batch, 'handler_threw');
          throw error;
        }),
        mergeMap((body) => from(this.settleBatch(request, reply, batch, body))),
      );
    }
    const payment = request.x402Payment;
    if (payment === undefined) {
      // Fail closed: a paid handler must never answer without a verified, claimed payment.
      throw new Error(
        `${request.method} ${request.url}: paid route reached without a verified payment`,
      );
    }
    return next.handle().pipe(
      catchError(async (error: unknown) => {
        await this.giveBack(payment);
        throw error;
      }),
      mergeMap((body) => from(this.settle(request, reply, payment, body))),
    );
  }

  private async settle(
    request: RequestWithPayment,
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
        throw settlementUnknown(outcome.transaction, outcome.reason);
    }
  }

  /**
   * batch-settlement: the voucher is recorded in the channel state (the charge is owed to
   * X402_PAY_TO from then on, claimed on chain later) before any byte of the body goes out; a
   * deposit first lands on chain through the facilitator. Refused → 402 with the reason, the
   * channel left as it was. A deposit that may have been sent, or a settlement that reports
   * success without this voucher's charge recorded (the SDK only logs a failure of its own
   * after-settle step, e.g. a deposit that outlived its channel reservation), is a 502: not a
   * 402 inviting a second deposit, and not a 200 nobody is charged for.
   */
  private async settleBatch(
    request: RequestWithPayment,
    reply: FastifyReply,
    inProgress: BatchPaymentInProgress,
    body: unknown,
  ): Promise<unknown> {
    if (clientGone(reply)) {
      await this.giveBackBatch(inProgress, 'handler_failed');
      throw new ApiError(
        ErrorCode.ClientClosedRequest,
        'The client closed the connection before settlement; nothing was charged.',
      );
    }
    let settlement: SettleResponse | symbol;
    const route = routeOf(request);
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    const { kind, channelId } = inProgress.accepted;
    // a deposit's chain calls are watched (like an `exact` settlement's); a voucher makes none
    const trace: SettlementTrace = { observed: false, broadcast: false };
    const settling =
      kind === 'deposit'
        ? settlementTraces.run(trace, () => this.paywall.settleBatch(inProgress.payment))
        : this.paywall.settleBatch(inProgress.payment);
    try {
      settlement = await withDeadline(settling, this.settleTimeoutMs);
    } catch (error) {
      await this.giveBackBatch(inProgress, 'handler_failed');
      if (kind === 'deposit') {
        // the deposit transaction may have gone out before the failure: money may have moved
        this.metrics.settlementNotProven(route, 'unknown', String(error), seconds());
        this.logger.error(`batch settlement: deposit on ${channelId} failed: ${remoteText(error)}`);
        throw channelPaymentUnknown();
      }
      this.metrics.settlementNotProven(route, 'unavailable', String(error), seconds());
      throw asPaymentError(error, this.logger);
    }
    if (typeof settlement === 'symbol') {
      this.metrics.settlementNotProven(route, 'unknown', 'settle_timeout', seconds());
      this.logger.error(
        `batch settlement: ${kind} on ${channelId} not settled within X402_SETTLE_TIMEOUT_MS`,
      );
      // still running: if it lands, this unanswered call's price comes off the channel's charge
      this.paywall.takeBackLateCharge(inProgress.payment, inProgress.accepted, settling);
      await this.releaseId(inProgress);
      throw channelPaymentUnknown();
    }
    const reason = settlement.errorReason ?? 'settlement_failed';
    const unknown = settlement.success
      ? !chargeRecorded(settlement, inProgress.accepted.maxClaimableAmount) && 'charge_not_recorded'
      : reason === CHANNEL_STATE_UNCERTAIN
        ? reason
        : kind === 'deposit' && mayHaveSent(settlement, trace, reason) && reason;
    if (unknown !== false) {
      this.metrics.settlementNotProven(route, 'unknown', unknown, seconds());
      this.logger.error(
        `batch settlement: ${kind} on ${channelId} ended without this call's charge recorded (${unknown}); answered 502, nothing charged`,
      );
      // the storage may have recorded it before failing: then its price comes off again
      if (unknown === CHANNEL_STATE_UNCERTAIN) {
        this.paywall.takeBackUncertainCharge(inProgress.payment, inProgress.accepted);
      }
      await this.releaseId(inProgress);
      throw channelPaymentUnknown();
    }
    if (!settlement.success && reason === CHANNEL_STATE_UNAVAILABLE) {
      this.metrics.settlementNotProven(route, 'unavailable', reason, seconds());
      this.logger.error(`batch settlement: ${kind} on ${channelId}: ${reason}`);
      await this.releaseId(inProgress);
      throw new ApiError(
        ErrorCode.SharedStateUnavailable,
        'The payment channel state could not be recorded; nothing was charged.',
        { 'retry-after': '5' },
      );
    }
    if (!settlement.success) {
      this.metrics.settlementNotProven(route, 'refused', reason, seconds());
      await this.releaseId(inProgress);
      const challenge = await this.paywall.challenge(request, `settlement_failed: ${reason}`);
      throw challengeResponse(challenge);
    }
    // owed to X402_PAY_TO by a recorded voucher, claimed on chain by the next claim round
    this.metrics.paymentSettled(route, inProgress.accepted.requirement, seconds());
    this.paywall.claimIfOverThreshold(settlement);
    const [name, value] = receiptHeader(2, settlement);
    const headers = { [name]: value, 'cache-control': 'private, no-store' };
    if (inProgress.paymentId !== undefined)
      await this.sold.storeForRetries(inProgress.paymentId, inProgress.fingerprint, headers, body);
    void reply.headers(headers);
    return body;
  }

  /** Nothing was sold: the channel's reservation and the payment-identifier are given back. */
  private async giveBackBatch(
    inProgress: BatchPaymentInProgress,
    reason: 'handler_threw' | 'handler_failed',
  ): Promise<void> {
    await inProgress.payment.cancel(reason);
    await this.releaseId(inProgress);
  }

  /** The payment-identifier, if one was sent, may be used again. */
  private async releaseId({ paymentId }: { paymentId: string | undefined }): Promise<void> {
    if (paymentId !== undefined) await this.ledger.releasePaymentId(paymentId);
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
    const headers = this.sold.receiptHeaders(inProgress.version, settlement);
    if (inProgress.paymentId !== undefined)
      await this.sold.storeForRetries(inProgress.paymentId, inProgress.fingerprint, headers, body);
    void reply.headers(headers);
    return body;
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

  /** Nothing was settled: the payment and its payment-identifier may be used again. */
  private async giveBack(inProgress: PaymentInProgress): Promise<void> {
    await this.ledger.release(inProgress.fingerprint);
    await this.releaseId(inProgress);
  }
}

function isTransaction(value: string | undefined): value is `0x${string}` {
  return value !== undefined && /^0x[0-9a-fA-F]{64}$/.test(value);
}

/** A batch payment whose outcome is not known: the call is not charged, a deposit stays the buyer's. */
function channelPaymentUnknown(): ApiError {
  return new ApiError(
    ErrorCode.SettlementUnknown,
    'The payment into your channel could not be confirmed. This call is not charged: if it ' +
      'lands after all, its price is taken back off the channel, and a deposit stays yours in ' +
      'the channel (refundable, or withdrawable after the channel delay). Retry in a few seconds.',
    { 'retry-after': '5' },
  );
}

/**
 * A signal that aborts when the client's connection closes before the answer went out; `stop`
 * stops watching.
 */
function watchDeparture(reply: FastifyReply): { signal: AbortSignal; stop: () => void } {
  const controller = new AbortController();
  const response = reply.raw;
  const onClose = (): void => {
    if (!response.writableFinished) controller.abort();
  };
  response.once('close', onClose);
  return {
    signal: controller.signal,
    stop: () => {
      response.off('close', onClose);
    },
  };
}

/** The connection the answer would go out on is gone: nobody would receive what is sold. */
function clientGone(reply: FastifyReply): boolean {
  const response = reply.raw;
  return response.destroyed || response.socket === null || response.socket.destroyed;
}
