import {
  Inject,
  Injectable,
  Logger,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { catchError, from, mergeMap, type Observable } from 'rxjs';
import { FacilitatorUnavailableError } from './facilitator-client.js';
import {
  challengeResponse,
  settlementUnknown,
  type PaymentInProgress,
  type RequestWithPayment,
} from './payment-errors.js';
import { PAYMENT_LEDGER, type PaymentLedger } from './payment-ledger.js';
import { X402Paywall, type SettlementOutcome } from './x402-paywall.js';
import { receiptHeader } from './x402-wire.js';

/** How long a response sold under a payment-identifier is served again for free. */
const STORED_RESPONSE_TTL_MS = 24 * 60 * 60 * 1000;
/** The facilitator's word for "sent, not yet confirmed". */
const SETTLEMENT_PENDING = 'settlement_pending';

/**
 * Settles after the handler succeeded and before any byte of the body is sent: settled → the
 * body goes out with the receipt; refused → 402, body withheld, payment usable again; handler
 * failed → nothing settled, payment usable again; outcome unknown (facilitator gone or
 * settlement pending) → 502, and the payment is never accepted again, since it may have moved.
 */
@Injectable()
export class SettlementInterceptor implements NestInterceptor {
  private readonly logger = new Logger(SettlementInterceptor.name);

  constructor(
    private readonly paywall: X402Paywall,
    @Inject(PAYMENT_LEDGER) private readonly ledger: PaymentLedger,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<RequestWithPayment>();
    const reply = http.getResponse<FastifyReply>();
    const payment = request.x402Payment;
    if (payment === undefined) return next.handle();
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
    const outcome = await this.attemptSettlement(inProgress);
    const [name, value] = receiptHeader(inProgress.version, outcome.settlement);
    if (outcome.kind === 'failed') {
      if (outcome.reason === SETTLEMENT_PENDING) {
        await this.ledger.markUncertain(inProgress.fingerprint, inProgress.expiresAt);
        throw settlementUnknown(outcome.settlement.transaction);
      }
      await this.giveBack(inProgress);
      const challenge = await this.paywall.challenge(
        request,
        `settlement_failed: ${outcome.reason}`,
      );
      throw challengeResponse({ ...challenge, headers: { ...challenge.headers, [name]: value } });
    }
    await this.ledger.settle(inProgress.fingerprint, inProgress.expiresAt);
    const headers = { [name]: value, 'cache-control': 'private, no-store' };
    if (inProgress.paymentId !== undefined)
      await this.storeForRetries(inProgress.paymentId, headers, body);
    void reply.headers(headers);
    return body;
  }

  /** The money has moved: failing to store the response for retries must not cost the client its 200. */
  private async storeForRetries(
    paymentId: string,
    headers: Record<string, string>,
    body: unknown,
  ): Promise<void> {
    try {
      await this.ledger.storeResponse(
        paymentId,
        { status: 200, headers, body },
        Date.now() + STORED_RESPONSE_TTL_MS,
      );
    } catch (error) {
      this.logger.error(
        `could not store the response for payment-identifier ${paymentId}: ${String(error)}`,
      );
    }
  }

  /** Asks the facilitator to settle; if it cannot say what happened, the payment is marked uncertain. */
  private async attemptSettlement(inProgress: PaymentInProgress): Promise<SettlementOutcome> {
    try {
      return await this.paywall.settle(inProgress.payment);
    } catch (error) {
      await this.ledger.markUncertain(inProgress.fingerprint, inProgress.expiresAt);
      this.logger.error(
        `settlement outcome unknown: ${error instanceof Error ? error.message : String(error)}`,
      );
      if (error instanceof FacilitatorUnavailableError) throw settlementUnknown(undefined);
      throw error;
    }
  }

  /** Nothing was settled: the payment and its payment-identifier may be used again. */
  private async giveBack(inProgress: PaymentInProgress): Promise<void> {
    await this.ledger.release(inProgress.fingerprint);
    if (inProgress.paymentId !== undefined)
      await this.ledger.releasePaymentId(inProgress.paymentId);
  }
}
