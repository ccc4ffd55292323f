import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { PaymentPayload } from '@x402/core/types';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PaidCalls } from './paid-calls.js';
import { malformedPayment } from './payment-errors.js';
import { PaymentIntake } from './payment-intake.js';
import {
  MalformedPaymentError,
  decodeV1Header,
  decodeV2Payment,
  presentedPaymentHeader,
  type V1Payment,
} from './x402-wire.js';

/** A payment header decoded, before it is matched with what the route offers. */
export type PresentedPaymentHeader =
  | { readonly version: 2; readonly payload: PaymentPayload }
  | { readonly version: 1; readonly payment: V1Payment };

const decoded = new WeakMap<FastifyRequest, PresentedPaymentHeader>();

/**
 * The payment `request` carries (undefined: none), decoded once per request whoever asks
 * first; a header that cannot be decoded (not base64 JSON of an x402 payload, another version,
 * oversized) is a 400 `invalid_payment`.
 */
export function presentedPaymentOf(request: FastifyRequest): PresentedPaymentHeader | undefined {
  const known = decoded.get(request);
  if (known !== undefined) return known;
  const header = presentedPaymentHeader((name) => single(request.headers[name]));
  if (header === undefined) return undefined;
  let presented: PresentedPaymentHeader;
  try {
    presented =
      header.version === 2
        ? { version: 2, payload: decodeV2Payment(header.value) }
        : { version: 1, payment: decodeV1Header(header.value) };
  } catch (error) {
    throw error instanceof MalformedPaymentError ? malformedPayment(error) : error;
  }
  decoded.set(request, presented);
  return presented;
}

/**
 * First of a paid route's guards: a payment header that cannot be decoded is refused before the
 * route's resolver runs, so junk costs no venue call; a decodable one is kept for PaymentGuard.
 * A payment-identifier retry of an answer already bought gets that answer here, without the
 * resolver, which could otherwise withhold it (503) while the data is stale.
 */
@Injectable()
export class PresentedPaymentGuard implements CanActivate {
  constructor(
    private readonly intake: PaymentIntake,
    private readonly calls: PaidCalls,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const presented = presentedPaymentOf(request);
    // v1 payments carry no payment-identifier; a paid call's is bound to its tool, which
    // PaymentGuard names
    if (presented?.version === 2 && this.calls.of(request) === undefined) {
      await this.intake.answerStored(request, http.getResponse<FastifyReply>(), presented.payload);
    }
    return true;
  }
}

/**
 * A metered route's (and its top-up's) first guard: a payment header that cannot be decoded is
 * a 400 before the route's resolver or handler does any work, as on the paid routes.
 */
@Injectable()
export class DecodedPaymentGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    presentedPaymentOf(context.switchToHttp().getRequest<FastifyRequest>());
    return true;
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
