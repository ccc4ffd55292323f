import {
  Inject,
  Injectable,
  Logger,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { PaymentPayload } from '@x402/core/types';
import { PAYMENT_IDENTIFIER, validatePaymentIdentifier } from '@x402/extensions/payment-identifier';
import type { FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from '../../common/api-error.js';
import { isRecord } from '../../common/json.js';
import { PreparedResponseException } from '../../common/prepared-response.exception.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import {
  acceptOfferedBatchPayment,
  isBatchPayment,
  type AcceptedBatchPayment,
} from '../schemes/batch-settlement/batch-acceptance.js';
import { FacilitatorUnavailableError } from '../facilitator/facilitator-client.js';
import {
  PaymentRefusedError,
  acceptPayment,
  paymentExpiry,
  paymentFingerprint,
  type AcceptedPayment,
} from '../schemes/exact/payment-acceptance.js';
import {
  asPaymentError,
  challengeResponse,
  routeOf,
  settlementStillUnknown,
  type RequestWithPayment,
} from './payment-errors.js';
import { PAYMENT_LEDGER, type ClaimResult, type PaymentLedger } from '../ledger/payment-ledger.js';
import { withDeadline } from '../schemes/exact/payment-settler.js';
import { SettlementReconciler } from '../schemes/exact/settlement-reconciler.js';
import { X402Paywall, type VerifiedPayment } from './x402-paywall.js';
import {
  decodeV1Payment,
  decodeV2Payment,
  presentedPaymentHeader,
  type ProtocolVersion,
} from './x402-wire.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../payments.settings.js';

const CLAIM_REFUSALS: Readonly<Record<Exclude<ClaimResult, 'claimed' | 'uncertain'>, string>> = {
  in_flight: 'payment_in_progress: this payment is already being used by another request',
  settled: 'payment_already_used: this payment has already been settled',
};

/**
 * Challenge and verify. No payment → 402 with the requirements. A payment → decoded (v1 or
 * v2), accepted only in the exact shape of an offered requirement, its payment-identifier and
 * the payment itself claimed so no copy can run concurrently, then verified by the facilitator
 * within X402_VERIFY_TIMEOUT_MS; the handler runs only for a verified, claimed payment. Runs
 * after the route's own validation.
 */
@Injectable()
export class PaymentGuard implements CanActivate {
  private readonly logger = new Logger(PaymentGuard.name);
  private readonly verifyTimeoutMs: number;

  constructor(
    private readonly paywall: X402Paywall,
    @Inject(PAYMENT_LEDGER) private readonly ledger: PaymentLedger,
    @Inject(PAYMENT_SETTINGS.token) payments: PaymentConfig,
    private readonly metrics: MetricsService,
    private readonly reconciler: SettlementReconciler,
  ) {
    this.verifyTimeoutMs = payments.verifyTimeoutMs;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<RequestWithPayment>();
    const header = presentedPaymentHeader((name) => single(request.headers[name]));
    if (header === undefined) {
      this.metrics.paymentChallenged(routeOf(request));
      throw challengeResponse(await this.paywall.challenge(request));
    }

    const presented = await this.accept(request, header.version, header.value);
    if (isAcceptedBatch(presented)) return this.activateBatch(request, presented);
    const accepted = presented;
    const { payload } = accepted;
    const fingerprint = paymentFingerprint(accepted);
    const expiresAt = paymentExpiry(accepted);
    const paymentId = paymentIdOf(payload);
    if (paymentId !== undefined)
      await this.claimPaymentId(request, paymentId, accepted.signature, fingerprint, expiresAt);
    try {
      const claim = await this.ledger.claim(fingerprint, expiresAt);
      if (claim === 'uncertain' || this.unrecordedUncertain(claim, fingerprint)) {
        throw settlementStillUnknown();
      }
      if (claim !== 'claimed') {
        this.metrics.paymentRefused(routeOf(request), CLAIM_REFUSALS[claim]);
        throw challengeResponse(await this.paywall.challenge(request, CLAIM_REFUSALS[claim]));
      }
      const payment = await this.verify(request, payload, fingerprint);
      request.x402Payment = {
        accepted,
        payment,
        version: header.version,
        fingerprint,
        expiresAt,
        paymentId,
      };
      return true;
    } catch (error) {
      if (paymentId !== undefined) await this.ledger.releasePaymentId(paymentId);
      throw error;
    }
  }

  /**
   * batch-settlement: no ledger claim (the channel state serializes a channel's vouchers: the
   * server scheme reserves the channel under its lock, and a second voucher on the same base is
   * stale). A voucher is checked locally against the channel state; a deposit is verified by
   * the facilitator. Refused → 402 with the scheme's reason. A payment-identifier works as with
   * `exact`: the same voucher presented again under its id gets the answer it bought, free.
   */
  private async activateBatch(
    request: RequestWithPayment,
    accepted: AcceptedBatchPayment,
  ): Promise<boolean> {
    const fingerprint = `${accepted.channelId.toLowerCase()}:${accepted.maxClaimableAmount}`;
    const paymentId = paymentIdOf(accepted.payload);
    if (paymentId !== undefined) {
      const expiresAt = Date.now() + accepted.requirement.maxTimeoutSeconds * 1000;
      await this.claimPaymentId(request, paymentId, accepted.signature, fingerprint, expiresAt);
    }
    try {
      const payment = await this.verdictWithinDeadline(request, accepted.payload);
      request.x402BatchPayment = { accepted, payment, fingerprint, paymentId };
      return true;
    } catch (error) {
      if (paymentId !== undefined) await this.ledger.releasePaymentId(paymentId);
      throw asPaymentError(error, this.logger);
    }
  }

  /** The facilitator's verdict within the deadline; a refusal, an outage or no answer gives the claim back. */
  private async verify(
    request: FastifyRequest,
    payload: PaymentPayload,
    fingerprint: string,
  ): Promise<VerifiedPayment> {
    try {
      return await this.verdictWithinDeadline(request, payload);
    } catch (error) {
      await this.ledger.release(fingerprint);
      throw asPaymentError(error, this.logger);
    }
  }

  /**
   * The verification of either scheme within X402_VERIFY_TIMEOUT_MS, counted in the metrics: a
   * refusal throws its 402, no answer a FacilitatorUnavailableError.
   */
  private async verdictWithinDeadline(
    request: FastifyRequest,
    payload: PaymentPayload,
  ): Promise<VerifiedPayment> {
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    try {
      const verdict = await withDeadline(
        this.paywall.verify(request, payload),
        this.verifyTimeoutMs,
      );
      if (typeof verdict === 'symbol') {
        throw new FacilitatorUnavailableError(
          'verify',
          new Error(`no verdict within X402_VERIFY_TIMEOUT_MS (${this.verifyTimeoutMs} ms)`),
        );
      }
      if (verdict.kind === 'challenge') {
        this.metrics.verificationFailed('refused', seconds());
        this.metrics.paymentRefused(routeOf(request), verdict.body.error);
        throw challengeResponse(verdict);
      }
      this.metrics.paymentVerified(routeOf(request), seconds());
      return verdict;
    } catch (error) {
      if (error instanceof FacilitatorUnavailableError) {
        this.metrics.verificationFailed('error', seconds());
        this.metrics.facilitatorError('verify');
      }
      throw error;
    }
  }

  /**
   * The payment in its v2 form, accepted only as exactly what this route offers: malformed →
   * 400, well-formed but not what is sold → 402 with the reason.
   */
  private async accept(
    request: FastifyRequest,
    version: ProtocolVersion,
    value: string,
  ): Promise<AcceptedPayment | AcceptedBatchPayment> {
    try {
      const offered = await this.paywall.requirementsFor(request);
      const presented = version === 2 ? decodeV2Payment(value) : decodeV1Payment(value, offered);
      if (version === 2 && isBatchPayment(presented)) {
        return acceptOfferedBatchPayment(presented, offered);
      }
      return acceptPayment(presented, offered);
    } catch (error) {
      if (error instanceof PaymentRefusedError) {
        this.metrics.paymentRefused(routeOf(request), error.reason);
        throw challengeResponse(await this.paywall.challenge(request, error.reason));
      }
      throw asPaymentError(error, this.logger);
    }
  }

  /**
   * An in-flight claim whose settlement this instance found uncertain but could not record in the
   * ledger yet: still unknown, never a 402 inviting a second payment.
   */
  private unrecordedUncertain(claim: string, fingerprint: string, paymentId?: string): boolean {
    return claim === 'in_flight' && this.reconciler.holdsUnrecorded(fingerprint, paymentId);
  }

  /**
   * payment-identifier: an id is bound to one payment for one resource. Bound and answered →
   * the stored response again, free; bound to something else → 409; still in flight → 402.
   */
  private async claimPaymentId(
    request: FastifyRequest,
    paymentId: string,
    signature: string,
    fingerprint: string,
    expiresAt: number,
  ): Promise<void> {
    const resource = `${request.method} ${request.url}`;
    const signatureDigest = createHash('sha256').update(signature.toLowerCase()).digest('hex');
    const claim = await this.ledger.claimPaymentId(
      paymentId,
      { fingerprint, signatureDigest, resource },
      expiresAt,
    );
    switch (claim.kind) {
      case 'claimed':
        return;
      case 'stored':
        throw new PreparedResponseException(
          claim.response.status,
          claim.response.body,
          claim.response.headers,
        );
      case 'uncertain':
        throw settlementStillUnknown();
      case 'conflict':
        throw new ApiError(
          ErrorCode.PaymentIdConflict,
          `payment-identifier ${paymentId} was already used with a different payment or resource.`,
        );
      case 'in_flight':
        if (this.unrecordedUncertain(claim.kind, fingerprint, paymentId)) {
          throw settlementStillUnknown();
        }
        this.metrics.paymentRefused(routeOf(request), 'payment_in_progress');
        throw challengeResponse(
          await this.paywall.challenge(
            request,
            'payment_in_progress: this payment-identifier is being used by another request',
          ),
        );
    }
  }
}

/**
 * The client's payment-identifier, if it sent one; a malformed one is a 400. Checked by the
 * SDK's rules without the `schema` the client echoes back: the SDK would compile that
 * client-supplied JSON schema with a new Ajv on every request (more CPU than verifying the
 * payment), and it adds nothing to the checks of `info` the SDK makes anyway.
 */
function paymentIdOf(payload: PaymentPayload): string | undefined {
  const extension: unknown = payload.extensions?.[PAYMENT_IDENTIFIER];
  if (!extension) return undefined; // absent, as the SDK reads it
  const validation = validatePaymentIdentifier(
    isRecord(extension) ? { ...extension, schema: undefined } : extension,
  );
  if (!validation.valid) {
    throw new ApiError(
      ErrorCode.InvalidPayment,
      `Malformed payment-identifier: ${(validation.errors ?? []).join('; ')}.`,
    );
  }
  return (extension as { info: { id?: string } }).info.id;
}

function isAcceptedBatch(
  accepted: AcceptedPayment | AcceptedBatchPayment,
): accepted is AcceptedBatchPayment {
  return 'channelId' in accepted;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
