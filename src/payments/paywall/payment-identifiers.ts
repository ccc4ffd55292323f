import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { PaymentPayload } from '@x402/core/types';
import { PAYMENT_IDENTIFIER, validatePaymentIdentifier } from '@x402/extensions/payment-identifier';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from '../../common/api-error.js';
import { isRecord } from '../../common/json.js';
import { remoteText } from '../../common/remote-text.js';
import { PreparedResponseException } from '../../common/prepared-response.exception.js';
import { PAYMENT_LEDGER, type PaymentLedger } from '../ledger/payment-ledger.js';
import { answerHeadersOf } from './answer-headers.js';
import { settlementStillUnknown, type RequestWithPayment } from './payment-errors.js';
import { PaymentVerification } from './payment-verification.js';
import { queryOf, routedPath } from './routed-path.js';

/** How long a response sold under a payment-identifier is served again for free. */
const STORED_RESPONSE_TTL_MS = 24 * 60 * 60 * 1000;

/** One payment a payment-identifier is bound to: its scheme's fingerprint and signature. */
export interface IdentifiedPayment {
  readonly paymentId: string;
  readonly fingerprint: string;
  readonly signature: string;
  /** When the payment can no longer settle: the binding is kept until then at least. */
  readonly expiresAt: number;
}

/**
 * The payment-identifier extension, the same for every scheme: an id is bound to one payment
 * for one resource. Bound and answered → the stored response again, free; bound to something
 * else → 409; still in flight → 402 (or 502 while its outcome is unknown). A sold answer is
 * stored under its id for a day.
 */
@Injectable()
export class PaymentIdentifiers {
  private readonly logger = new Logger(PaymentIdentifiers.name);

  constructor(
    @Inject(PAYMENT_LEDGER) private readonly ledger: PaymentLedger,
    private readonly verification: PaymentVerification,
  ) {}

  /**
   * Binds the id to this payment, or throws what to answer. `stillUnknown`: the scheme holds an
   * in-flight payment whose outcome is unknown but not yet recorded (never a 402 then).
   */
  async claim(
    request: FastifyRequest,
    payment: IdentifiedPayment,
    stillUnknown: () => boolean = () => false,
  ): Promise<void> {
    const { paymentId, fingerprint, signature, expiresAt } = payment;
    const resource = resourceOf(request);
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
        if (stillUnknown()) throw settlementStillUnknown();
        return this.verification.refuse(
          request,
          'payment_in_progress: this payment-identifier is being used by another request',
        );
    }
  }

  /** The money has moved: failing to store the response for retries must not cost the client its 200. */
  async storeAnswer(
    paymentId: string,
    fingerprint: string,
    headers: Record<string, string>,
    body: unknown,
  ): Promise<void> {
    try {
      await this.ledger.storeResponse(
        paymentId,
        fingerprint,
        { status: 200, headers, body },
        Date.now() + STORED_RESPONSE_TTL_MS,
      );
    } catch (error) {
      this.logger.error(
        `could not store the response for payment-identifier ${paymentId}: ${remoteText(error)}`,
      );
    }
  }

  /**
   * A sold answer goes out: its receipt headers and the answer's own (`addAnswerHeaders`) on the
   * reply, and all of them kept with the body under its payment-identifier (if any) for retries.
   */
  async deliver(
    reply: FastifyReply,
    sold: { readonly paymentId: string | undefined; readonly fingerprint: string },
    receipt: Record<string, string>,
    body: unknown,
  ): Promise<unknown> {
    const headers = { ...(await answerHeadersOf(reply.request)), ...receipt };
    if (sold.paymentId !== undefined) {
      await this.storeAnswer(sold.paymentId, sold.fingerprint, headers, body);
    }
    void reply.headers(headers);
    return body;
  }

  /** The id may be used again: nothing was sold under it. */
  async release(paymentId: string | undefined): Promise<void> {
    if (paymentId !== undefined) await this.ledger.releasePaymentId(paymentId);
  }
}

/** What a payment-identifier used on `request` is bound to: its route and URL, or its tool call. */
export function resourceOf(request: FastifyRequest): string {
  return (
    (request as RequestWithPayment).x402Call?.resource ??
    `${request.method} ${routedPath(request)}${queryOf(request)}`
  );
}

/**
 * The client's payment-identifier, if it sent one; a malformed one is a 400. Checked by the
 * SDK's rules without the `schema` the client echoes back: the SDK would compile that
 * client-supplied JSON schema with a new Ajv on every request (more CPU than verifying the
 * payment), and it adds nothing to the checks of `info` the SDK makes anyway.
 */
export function paymentIdOf(payload: PaymentPayload): string | undefined {
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
