import {
  Inject,
  Injectable,
  Logger,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { extractAndValidatePaymentIdentifier } from '@x402/extensions/payment-identifier';
import type { PaymentPayload } from '@x402/core/types';
import type { FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { PreparedResponseException } from '../common/prepared-response.exception.js';
import { FacilitatorUnavailableError } from './facilitator-client.js';
import { PAYMENT_LEDGER, type PaymentLedger } from './payment-ledger.js';
import { X402Paywall, type PaymentChallenge, type VerifiedPayment } from './x402-paywall.js';
import {
  MalformedPaymentError,
  decodeV1Payment,
  decodeV2Payment,
  paymentFingerprint,
  presentedPaymentHeader,
  type ProtocolVersion,
} from './x402-wire.js';

/** What the guard leaves on the request for the settlement interceptor. */
export interface PaymentInProgress {
  readonly payment: VerifiedPayment;
  readonly version: ProtocolVersion;
  readonly fingerprint: string;
  readonly paymentId: string | undefined;
}

export type RequestWithPayment = FastifyRequest & { x402Payment?: PaymentInProgress };

const CLAIM_REFUSALS = {
  in_flight: 'payment_in_progress: this payment is already being used by another request',
  settled: 'payment_already_used: this payment has already been settled',
} as const;

/**
 * Challenge and verify. No payment → 402 with the requirements. A payment → decoded (v1 or
 * v2), claimed so no copy of it can run concurrently, verified by the facilitator; the
 * handler runs only for a verified, claimed payment. Runs after the route's own validation.
 */
@Injectable()
export class PaymentGuard implements CanActivate {
  private readonly logger = new Logger(PaymentGuard.name);

  constructor(
    private readonly paywall: X402Paywall,
    @Inject(PAYMENT_LEDGER) private readonly ledger: PaymentLedger,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<RequestWithPayment>();
    const header = presentedPaymentHeader((name) => single(request.headers[name]));
    if (header === undefined) throw challengeResponse(await this.paywall.challenge(request));

    const payload = await this.decode(request, header.version, header.value);
    const fingerprint = paymentFingerprint(payload);
    const paymentId = paymentIdOf(payload);
    if (paymentId !== undefined) await this.replayStored(paymentId, fingerprint);

    const claim = await this.ledger.claim(fingerprint);
    if (claim !== 'claimed') {
      throw challengeResponse(await this.paywall.challenge(request, CLAIM_REFUSALS[claim]));
    }
    try {
      const verdict = await this.paywall.verify(request, payload);
      if (verdict.kind === 'challenge') {
        await this.ledger.release(fingerprint);
        throw challengeResponse(verdict);
      }
      request.x402Payment = { payment: verdict, version: header.version, fingerprint, paymentId };
      return true;
    } catch (error) {
      await this.ledger.release(fingerprint);
      throw asPaymentError(error, this.logger);
    }
  }

  private async decode(
    request: FastifyRequest,
    version: ProtocolVersion,
    value: string,
  ): Promise<PaymentPayload> {
    try {
      if (version === 2) return decodeV2Payment(value);
      const { requirements } = await this.paywall.challenge(request);
      return decodeV1Payment(value, requirements);
    } catch (error) {
      throw asPaymentError(error, this.logger);
    }
  }

  /** payment-identifier: the same id and payment get the stored response; another payment, 409. */
  private async replayStored(paymentId: string, fingerprint: string): Promise<void> {
    const stored = await this.ledger.findResponse(paymentId);
    if (stored === undefined) return;
    if (stored.fingerprint !== fingerprint) {
      throw new ApiError(
        ErrorCode.PaymentIdConflict,
        `payment-identifier ${paymentId} was already used with a different payment.`,
      );
    }
    throw new PreparedResponseException(stored.status, stored.body, stored.headers);
  }
}

export function challengeResponse(challenge: PaymentChallenge): PreparedResponseException {
  return new PreparedResponseException(402, challenge.body, {
    ...challenge.headers,
    'content-type': 'application/json; charset=utf-8',
  });
}

/** Maps what can go wrong around a payment to what the client should see; nothing is charged. */
export function asPaymentError(error: unknown, logger: Logger): unknown {
  if (error instanceof MalformedPaymentError) {
    return new ApiError(ErrorCode.InvalidPayment, `Malformed payment: ${error.message}.`);
  }
  if (error instanceof FacilitatorUnavailableError) {
    logger.warn(error.message);
    return new ApiError(
      ErrorCode.FacilitatorUnavailable,
      'The payment facilitator cannot be reached right now; nothing was charged.',
      { 'retry-after': '5' },
    );
  }
  return error;
}

/** The client's payment-identifier, if it sent one; a malformed one is a 400. */
function paymentIdOf(payload: PaymentPayload): string | undefined {
  const { id, validation } = extractAndValidatePaymentIdentifier(payload);
  if (!validation.valid) {
    throw new ApiError(
      ErrorCode.InvalidPayment,
      `Malformed payment-identifier: ${(validation.errors ?? []).join('; ')}.`,
    );
  }
  return id ?? undefined;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
