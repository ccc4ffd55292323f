import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { PaymentPayload } from '@x402/core/types';
import { PAYMENT_IDENTIFIER, validatePaymentIdentifier } from '@x402/extensions/payment-identifier';
import { ApiError, ErrorCode } from '../../common/api-error.js';
import { isRecord } from '../../common/json.js';
import { remoteText } from '../../common/remote-text.js';
import {
  PAYMENT_LEDGER,
  type PaymentLedger,
  type StoredResponse,
} from '../ledger/payment-ledger.js';
import { PaymentRefusedError } from './offered-requirement.js';
import { settlementStillUnknown } from './payment-errors.js';
import type { SaleContext } from './seller-scheme.js';

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

/** A payment-identifier retry of an answer already sold: `response` again, free. */
export class AnswerAlreadySold extends Error {
  constructor(readonly response: StoredResponse) {
    super('this payment-identifier already bought its answer');
    this.name = 'AnswerAlreadySold';
  }
}

/**
 * The payment-identifier extension, the same for every scheme: an id is bound to one payment
 * for one resource. Bound and answered → the stored response again, free; bound to something
 * else → 409; still in flight → refused (402) (or 502 while its outcome is unknown). A sold answer is
 * stored under its id for a day.
 */
@Injectable()
export class PaymentIdentifiers {
  private readonly logger = new Logger(PaymentIdentifiers.name);

  constructor(@Inject(PAYMENT_LEDGER) private readonly ledger: PaymentLedger) {}

  /**
   * Binds the id to this payment, or throws what to answer. `stillUnknown`: the scheme holds an
   * in-flight payment whose outcome is unknown but not yet recorded (never a 402 then).
   */
  async claim(
    context: Pick<SaleContext, 'resource'>,
    payment: IdentifiedPayment,
    stillUnknown: () => boolean = () => false,
  ): Promise<void> {
    const { paymentId, fingerprint, signature, expiresAt } = payment;
    const { resource } = context;
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
        throw new AnswerAlreadySold(claim.response);
      case 'uncertain':
        throw settlementStillUnknown();
      case 'conflict':
        throw new ApiError(
          ErrorCode.PaymentIdConflict,
          `payment-identifier ${paymentId} was already used with a different payment or resource.`,
        );
      case 'in_flight':
        if (stillUnknown()) throw settlementStillUnknown();
        throw new PaymentRefusedError(
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

  /** Whether `paymentId` holds an answer it bought: a retry may be answered from it. */
  hasStoredAnswer(paymentId: string): Promise<boolean> {
    return this.ledger.hasStoredResponse(paymentId);
  }

  /** The id may be used again: nothing was sold under it. */
  async release(paymentId: string | undefined): Promise<void> {
    if (paymentId !== undefined) await this.ledger.releasePaymentId(paymentId);
  }
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
