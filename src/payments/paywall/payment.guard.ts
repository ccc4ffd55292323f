import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { PaymentPayload } from '@x402/core/types';
import type { FastifyReply } from 'fastify';
import { ApiError, ErrorCode } from '../../common/api-error.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { PaymentRefusedError } from './offered-requirement.js';
import { PaidCalls } from './paid-calls.js';
import {
  challengeResponse,
  routeOf,
  type PaidCall,
  type RequestWithPayment,
} from './payment-errors.js';
import { PaymentIntake } from './payment-intake.js';
import { X402Paywall } from './x402-paywall.js';
import { presentedPaymentOf } from './presented-payment.guard.js';
import { pairV1Payment } from './x402-wire.js';

/**
 * Challenge, or open the sale. No payment → 402 with the requirements (v2 PAYMENT-REQUIRED
 * header, v1 body). A payment header → decoded (v1 or v2; malformed → 400), as
 * PresentedPaymentGuard decoded it before the route's resolver ran, and handed to
 * PaymentIntake, which opens the sale with the offer's scheme (a refusal → 402 with the reason);
 * the handler runs only for a sale a scheme opened. Runs after the route's own validation.
 * An in-process request standing for a paid call (an MCP tool call, PaidCalls) is sold the same
 * way, bound to the call's resource; once its answer can no longer be delivered its reply is
 * closed, as a departed client's is, so nothing is settled.
 */
@Injectable()
export class PaymentGuard implements CanActivate {
  constructor(
    private readonly paywall: X402Paywall,
    private readonly intake: PaymentIntake,
    private readonly metrics: MetricsService,
    private readonly calls: PaidCalls,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<RequestWithPayment>();
    const reply = http.getResponse<FastifyReply>();
    const call = this.calls.of(request);
    if (call !== undefined) {
      request.x402Call = call;
      closeWhenAborted(call, reply);
    }
    const presented = presentedPaymentOf(request);
    if (presented === undefined) {
      this.metrics.paymentChallenged(routeOf(request));
      throw challengeResponse(await this.paywall.challenge(request));
    }
    request.x402Sale = await this.intake.open(request, reply, presented.version, (offered) =>
      presented.version === 2
        ? forThisResource(presented.payload, call)
        : pairV1Payment(presented.payment, offered),
    );
    await request.x402SaleOpened?.();
    return true;
  }
}

/**
 * A paid call's payment names its resource (`mcp://tool/<name>`) or none; an HTTP request's is
 * not one made for an MCP tool.
 */
function forThisResource(payload: PaymentPayload, call: PaidCall | undefined): PaymentPayload {
  const url: unknown = payload.resource?.url;
  if (call !== undefined) {
    if (url !== undefined && url !== call.resourceUrl) {
      throw new PaymentRefusedError(
        `resource_mismatch: this payment was made for another resource, not ${call.resourceUrl}`,
      );
    }
  } else if (typeof url === 'string' && url.startsWith('mcp:')) {
    throw new PaymentRefusedError(
      'resource_mismatch: this payment was made for an MCP tool, not for this HTTP route',
    );
  }
  return payload;
}

/** A call whose answer can no longer be delivered: its reply closes, as on a client's departure. */
function closeWhenAborted(call: PaidCall, reply: FastifyReply): void {
  if (call.signal.aborted) {
    throw new ApiError(ErrorCode.ClientClosedRequest, 'The call was cancelled; nothing was sold.');
  }
  call.signal.addEventListener(
    'abort',
    () => {
      reply.raw.destroy();
    },
    { once: true },
  );
}
