import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { PaymentPayload } from '@x402/core/types';
import type { FastifyReply } from 'fastify';
import { MetricsService } from '../../metrics/metrics.service.js';
import { PaymentRefusedError } from './offered-requirement.js';
import { challengeResponse, routeOf, type RequestWithPayment } from './payment-errors.js';
import { PaymentIntake } from './payment-intake.js';
import { X402Paywall } from './x402-paywall.js';
import { decodeV1Payment, decodeV2Payment, presentedPaymentHeader } from './x402-wire.js';

/**
 * Challenge, or open the sale. No payment → 402 with the requirements (v2 PAYMENT-REQUIRED
 * header, v1 body). A payment header → decoded (v1 or v2; malformed → 400) and handed to
 * PaymentIntake, which opens the sale with the offer's scheme (a refusal → 402 with the reason);
 * the handler runs only for a sale a scheme opened. Runs after the route's own validation.
 */
@Injectable()
export class PaymentGuard implements CanActivate {
  constructor(
    private readonly paywall: X402Paywall,
    private readonly intake: PaymentIntake,
    private readonly metrics: MetricsService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<RequestWithPayment>();
    const header = presentedPaymentHeader((name) => single(request.headers[name]));
    if (header === undefined) {
      this.metrics.paymentChallenged(routeOf(request));
      throw challengeResponse(await this.paywall.challenge(request));
    }
    const { version, value } = header;
    const reply = http.getResponse<FastifyReply>();
    request.x402Sale = await this.intake.open(request, reply, version, (offered) =>
      version === 2 ? notForATool(decodeV2Payment(value)) : decodeV1Payment(value, offered),
    );
    return true;
  }
}

/** A payment made for an MCP tool (`mcp://tool/<name>`) is not one for an HTTP route. */
function notForATool(payload: PaymentPayload): PaymentPayload {
  const url: unknown = payload.resource?.url;
  if (typeof url === 'string' && url.startsWith('mcp:')) {
    throw new PaymentRefusedError(
      'resource_mismatch: this payment was made for an MCP tool, not for this HTTP route',
    );
  }
  return payload;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
