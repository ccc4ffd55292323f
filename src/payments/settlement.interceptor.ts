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
import { PAYMENT_LEDGER, type PaymentLedger } from './payment-ledger.js';
import {
  asPaymentError,
  challengeResponse,
  type PaymentInProgress,
  type RequestWithPayment,
} from './payment.guard.js';
import { X402Paywall } from './x402-paywall.js';
import { receiptHeader } from './x402-wire.js';

/** How long a response sold under a payment-identifier is served again for free. */
const STORED_RESPONSE_TTL_MS = 24 * 60 * 60 * 1000;
/** A settled payment cannot verify again after its validBefore; until then the ledger refuses it. */
const FALLBACK_SETTLED_TTL_MS = 60 * 60 * 1000;

/**
 * Settles after the handler succeeded and before any byte of the body is sent: settled → the
 * body goes out with the receipt; refused → 402 and the body is withheld; handler failed →
 * nothing is settled and the payment may be used again.
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
      mergeMap((body) => from(this.settle(request, reply, payment, body))),
      catchError(async (error: unknown) => {
        await this.ledger.release(payment.fingerprint);
        throw asPaymentError(error, this.logger);
      }),
    );
  }

  private async settle(
    request: RequestWithPayment,
    reply: FastifyReply,
    inProgress: PaymentInProgress,
    body: unknown,
  ): Promise<unknown> {
    const outcome = await this.paywall.settle(inProgress.payment);
    const [name, value] = receiptHeader(inProgress.version, outcome.settlement);
    if (outcome.kind === 'failed') {
      await this.ledger.release(inProgress.fingerprint);
      const challenge = await this.paywall.challenge(
        request,
        `settlement_failed: ${outcome.reason}`,
      );
      throw challengeResponse({ ...challenge, headers: { ...challenge.headers, [name]: value } });
    }
    await this.ledger.settle(inProgress.fingerprint, settledUntil(inProgress));
    const headers = { [name]: value, 'cache-control': 'private, no-store' };
    if (inProgress.paymentId !== undefined) {
      await this.ledger.storeResponse(
        inProgress.paymentId,
        { fingerprint: inProgress.fingerprint, status: 200, headers, body },
        Date.now() + STORED_RESPONSE_TTL_MS,
      );
    }
    void reply.headers(headers);
    return body;
  }
}

function settledUntil(inProgress: PaymentInProgress): number {
  const authorization = inProgress.payment.payload.payload.authorization as
    { validBefore?: unknown } | undefined;
  const validBefore = Number(authorization?.validBefore);
  return Number.isFinite(validBefore) && validBefore > 0
    ? validBefore * 1000 + 60_000
    : Date.now() + FALLBACK_SETTLED_TTL_MS;
}
