import {
  Inject,
  Injectable,
  Logger,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import type { PaymentPayload } from '@x402/core/types';
import { extractAndValidatePaymentIdentifier } from '@x402/extensions/payment-identifier';
import type { FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { PreparedResponseException } from '../common/prepared-response.exception.js';
import { asPaymentError, challengeResponse, type RequestWithPayment } from './payment-errors.js';
import { PAYMENT_LEDGER, type ClaimResult, type PaymentLedger } from './payment-ledger.js';
import { X402Paywall, type VerifiedPayment } from './x402-paywall.js';
import {
  decodeV1Payment,
  decodeV2Payment,
  exactEvmAuthorization,
  paymentExpiry,
  paymentFingerprint,
  presentedPaymentHeader,
  type ProtocolVersion,
} from './x402-wire.js';

const CLAIM_REFUSALS: Readonly<Record<Exclude<ClaimResult, 'claimed'>, string>> = {
  in_flight: 'payment_in_progress: this payment is already being used by another request',
  settled: 'payment_already_used: this payment has already been settled',
  uncertain:
    'payment_outcome_unknown: an earlier settlement of this payment was not confirmed; it may have been taken',
};

/**
 * Challenge and verify. No payment → 402 with the requirements. A payment → decoded (v1 or
 * v2) and checked, its payment-identifier and the payment itself claimed so no copy can run
 * concurrently, then verified by the facilitator; the handler runs only for a verified,
 * claimed payment. Runs after the route's own validation.
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
    const expiresAt = paymentExpiry(payload);
    const paymentId = paymentIdOf(payload);
    if (paymentId !== undefined)
      await this.claimPaymentId(request, paymentId, fingerprint, expiresAt);
    try {
      const claim = await this.ledger.claim(fingerprint, expiresAt);
      if (claim !== 'claimed') {
        throw challengeResponse(await this.paywall.challenge(request, CLAIM_REFUSALS[claim]));
      }
      const payment = await this.verify(request, payload, fingerprint);
      request.x402Payment = { payment, version: header.version, fingerprint, expiresAt, paymentId };
      return true;
    } catch (error) {
      if (paymentId !== undefined) await this.ledger.releasePaymentId(paymentId);
      throw error;
    }
  }

  /** The facilitator's verdict; a refusal or an outage gives the claim back. */
  private async verify(
    request: FastifyRequest,
    payload: PaymentPayload,
    fingerprint: string,
  ): Promise<VerifiedPayment> {
    try {
      const verdict = await this.paywall.verify(request, payload);
      if (verdict.kind === 'challenge') throw challengeResponse(verdict);
      return verdict;
    } catch (error) {
      await this.ledger.release(fingerprint);
      throw asPaymentError(error, this.logger);
    }
  }

  /** The payment in its v2 form, its signed part checked; anything malformed is a 400. */
  private async decode(
    request: FastifyRequest,
    version: ProtocolVersion,
    value: string,
  ): Promise<PaymentPayload> {
    try {
      const payload =
        version === 2
          ? decodeV2Payment(value)
          : decodeV1Payment(value, await this.paywall.requirementsFor(request));
      exactEvmAuthorization(payload);
      return payload;
    } catch (error) {
      throw asPaymentError(error, this.logger);
    }
  }

  /**
   * payment-identifier: an id is bound to one payment for one resource. Bound and answered →
   * the stored response again, free; bound to something else → 409; still in flight → 402.
   */
  private async claimPaymentId(
    request: FastifyRequest,
    paymentId: string,
    fingerprint: string,
    expiresAt: number,
  ): Promise<void> {
    const resource = `${request.method} ${request.url}`;
    const claim = await this.ledger.claimPaymentId(paymentId, { fingerprint, resource }, expiresAt);
    switch (claim.kind) {
      case 'claimed':
        return;
      case 'stored':
        throw new PreparedResponseException(
          claim.response.status,
          claim.response.body,
          claim.response.headers,
        );
      case 'conflict':
        throw new ApiError(
          ErrorCode.PaymentIdConflict,
          `payment-identifier ${paymentId} was already used with a different payment or resource.`,
        );
      case 'in_flight':
        throw challengeResponse(
          await this.paywall.challenge(
            request,
            'payment_in_progress: this payment-identifier is being used by another request',
          ),
        );
    }
  }
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
