import { Inject, Injectable } from '@nestjs/common';
import type { PaymentPayload } from '@x402/core/types';
import type { FastifyRequest } from 'fastify';
import { MetricsService } from '../../metrics/metrics.service.js';
import { FacilitatorUnavailableError } from '../facilitator/facilitator-client.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../payments.settings.js';
import { withDeadline } from '../../common/deadline.js';
import { PaymentRefusedError } from './offered-requirement.js';
import type { PaymentChallenge } from './challenges.js';
import { challengeResponse, routeOf } from './payment-errors.js';
import { requestOf } from './sale-context.js';
import type { SaleContext } from './seller-scheme.js';
import { X402Paywall, type VerifiedPayment } from './x402-paywall.js';

/**
 * The facilitator's verdict on a payment within X402_VERIFY_TIMEOUT_MS, and the 402 that
 * refuses one, counted in the metrics the same way for every scheme.
 */
@Injectable()
export class PaymentVerification {
  private readonly verifyTimeoutMs: number;

  constructor(
    private readonly paywall: X402Paywall,
    private readonly metrics: MetricsService,
    @Inject(PAYMENT_SETTINGS.token) payments: PaymentConfig,
  ) {
    this.verifyTimeoutMs = payments.verifyTimeoutMs;
  }

  /**
   * A refusal throws PaymentRefusedError with the facilitator's reason; no answer in time a
   * FacilitatorUnavailableError.
   */
  async verify(context: SaleContext, payload: PaymentPayload): Promise<VerifiedPayment> {
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    try {
      const verdict = await withDeadline(
        this.paywall.verify(requestOf(context), payload),
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
        throw new FacilitatorRefusal(verdict);
      }
      this.metrics.paymentVerified(context.route, seconds());
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
   * Refuses the payment with the route's 402 naming the reason (the facilitator's own 402 for
   * its refusal: a scheme's server side may add what the buyer needs, a channel's state, say);
   * nothing is charged.
   */
  async refuse(request: FastifyRequest, refusal: PaymentRefusedError): Promise<never> {
    this.metrics.paymentRefused(routeOf(request), refusal.reason);
    if (refusal instanceof FacilitatorRefusal) throw challengeResponse(refusal.challenge);
    throw challengeResponse(await this.paywall.challenge(request, refusal.reason));
  }
}

/** The facilitator refused the payment: its 402, as the x402 server wrote it. */
export class FacilitatorRefusal extends PaymentRefusedError {
  constructor(readonly challenge: PaymentChallenge) {
    super(challenge.body.error);
    this.name = 'FacilitatorRefusal';
  }
}
