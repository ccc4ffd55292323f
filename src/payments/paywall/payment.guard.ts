import { Injectable, Logger, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { MetricsService } from '../../metrics/metrics.service.js';
import { PaymentRefusedError, offeredRequirement } from './offered-requirement.js';
import {
  asPaymentError,
  challengeResponse,
  routeOf,
  type RequestWithPayment,
} from './payment-errors.js';
import { PaymentVerification } from './payment-verification.js';
import { SchemeRegistry } from './scheme-registry.js';
import { X402Paywall } from './x402-paywall.js';
import { decodeV1Payment, decodeV2Payment, presentedPaymentHeader } from './x402-wire.js';

/**
 * Challenge, or hand the payment to its scheme. No payment → 402 with the requirements. A
 * payment → decoded (v1 or v2; malformed → 400), its `accepted` matched field by field to one of
 * the route's offers (none → 402 with the reason), and given to that offer's scheme, which
 * accepts it only in exactly the offered shape, claims it and has it verified (a refusal → 402
 * with the reason); the handler runs only for a sale the scheme opened. Runs after the route's
 * own validation.
 */
@Injectable()
export class PaymentGuard implements CanActivate {
  private readonly logger = new Logger(PaymentGuard.name);

  constructor(
    private readonly paywall: X402Paywall,
    private readonly schemes: SchemeRegistry,
    private readonly verification: PaymentVerification,
    private readonly metrics: MetricsService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<RequestWithPayment>();
    const header = presentedPaymentHeader((name) => single(request.headers[name]));
    if (header === undefined) {
      this.metrics.paymentChallenged(routeOf(request));
      throw challengeResponse(await this.paywall.challenge(request));
    }
    try {
      const offered = await this.paywall.requirementsFor(request);
      const { version, value } = header;
      const payload = version === 2 ? decodeV2Payment(value) : decodeV1Payment(value, offered);
      const requirement = offeredRequirement(payload, offered);
      const scheme = this.schemes.named(requirement.scheme);
      // v1 clients are offered, and may pay with, only the schemes their 402 body lists
      if (scheme === undefined || (version === 1 && !scheme.offeredToV1)) {
        throw new PaymentRefusedError(`unsupported_scheme: ${requirement.scheme}`);
      }
      request.x402Sale = await scheme.open(request, { payload, version, requirement });
      return true;
    } catch (error) {
      if (error instanceof PaymentRefusedError) {
        return this.verification.refuse(request, error.reason);
      }
      throw asPaymentError(error, this.logger);
    }
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
