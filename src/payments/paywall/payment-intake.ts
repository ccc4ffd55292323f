import { Injectable, Logger } from '@nestjs/common';
import type { PaymentPayload } from '@x402/core/types';
import type { FastifyRequest } from 'fastify';
import { PaymentRefusedError, offeredRequirement } from './offered-requirement.js';
import { asPaymentError } from './payment-errors.js';
import { PaymentVerification } from './payment-verification.js';
import { SchemeRegistry } from './scheme-registry.js';
import type { OpenSale } from './seller-scheme.js';
import { X402Paywall } from './x402-paywall.js';
import type { ProtocolVersion } from './x402-wire.js';

/**
 * A presented payment (already decoded into its v2 form) to an open sale, the same for every
 * transport (the HTTP guard, an MCP tool call): its `accepted` matched field by field to one of
 * the offers (none → 402 with the reason), handed to that offer's scheme, which accepts it only
 * in exactly the offered shape, claims it and has it verified. Refusals are 402s with the reason;
 * a malformed payment is a 400.
 */
@Injectable()
export class PaymentIntake {
  private readonly logger = new Logger(PaymentIntake.name);

  constructor(
    private readonly paywall: X402Paywall,
    private readonly schemes: SchemeRegistry,
    private readonly verification: PaymentVerification,
  ) {}

  /** `decode`: the payment header in v2 form, given what the route offers (v1 pairs with one). */
  async open(
    request: FastifyRequest,
    version: ProtocolVersion,
    decode: (offered: Awaited<ReturnType<X402Paywall['requirementsFor']>>) => PaymentPayload,
  ): Promise<OpenSale> {
    try {
      const offered = await this.paywall.requirementsFor(request);
      const payload = decode(offered);
      const requirement = offeredRequirement(payload, offered);
      const scheme = this.schemes.named(requirement.scheme, requirement.network);
      // v1 clients are offered, and may pay with, only the schemes their 402 body lists
      if (scheme === undefined || (version === 1 && !scheme.offeredToV1)) {
        throw new PaymentRefusedError(`unsupported_scheme: ${requirement.scheme}`);
      }
      return await scheme.open(request, { payload, version, requirement });
    } catch (error) {
      if (error instanceof PaymentRefusedError) {
        return this.verification.refuse(request, error.reason);
      }
      throw asPaymentError(error, this.logger);
    }
  }
}
