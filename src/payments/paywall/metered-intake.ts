import { Inject, Injectable, Logger } from '@nestjs/common';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from '../../common/api-error.js';
import { isRecord } from '../../common/json.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { soldNetworks } from '../networks/sold-networks.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../payments.settings.js';
import { withReason, type PaymentChallenge } from './challenges.js';
import type {
  ChargedUnit,
  MeteredAccount,
  MeteredCharge,
  MeteredSale,
  MeteringScheme,
} from './metered-sale.js';
import { PaymentRefusedError, offeredRequirement } from './offered-requirement.js';
import { asPaymentError, challengeResponse, routeOf } from './payment-errors.js';
import { saleContextOf } from './sale-context.js';
import { SchemeRegistry } from './scheme-registry.js';
import { X402Paywall } from './x402-paywall.js';
import { decodeV2Payment, presentedPaymentHeader } from './x402-wire.js';

const POSITIVE_INTEGER = /^[1-9]\d{0,38}$/;

/** What the route asks of a metered sale before it is opened. */
export interface MeteredTerms {
  /** The largest budget one payment may cover, atomic units. */
  readonly maxBudget: bigint;
  /** Called with the (not yet verified) payer before anything is verified: throw to refuse. */
  readonly admit?: (payer: string) => void;
}

/**
 * The HTTP side of a metered sale (`@Metered` routes), as PaymentIntake is of a sale per
 * request: no payment → the route's 402 (offering only schemes that can meter); a v2 payment
 * whose `accepted` is an offer with `amount` set to the buyer's budget (a positive multiple of
 * the unit price, at most the route's cap) → handed to that scheme's `metering`, which raises
 * the buyer's cover and charges nothing. Refusals are 402s with the reason, malformed payments
 * 400s, nothing charged.
 */
@Injectable()
export class MeteredIntake {
  private readonly logger = new Logger(MeteredIntake.name);

  constructor(
    private readonly paywall: X402Paywall,
    private readonly schemes: SchemeRegistry,
    private readonly metrics: MetricsService,
    @Inject(PAYMENT_SETTINGS.token) private readonly payments: PaymentConfig,
  ) {}

  /** Whether a scheme that can meter is sold on any network: else metered routes answer 503. */
  available(): boolean {
    return soldNetworks(this.payments).some(({ network }) =>
      this.schemes.servingOn(network).some((plugin) => plugin.metering !== undefined),
    );
  }

  /** Opens the sale the request pays for, or throws the response to send instead. */
  async open(
    request: FastifyRequest,
    reply: FastifyReply,
    terms: MeteredTerms,
  ): Promise<MeteredSale> {
    const header = presentedPaymentHeader((name) => single(request.headers[name]));
    const unpaid = await this.paywall.challenge(request);
    if (header === undefined) {
      this.metrics.paymentChallenged(routeOf(request));
      throw challengeResponse(unpaid);
    }
    try {
      if (header.version !== 2) {
        throw new PaymentRefusedError(
          'unsupported_scheme: a metered route is paid with an x402 v2 batch-settlement voucher (PAYMENT-SIGNATURE)',
        );
      }
      const offered = await this.paywall.requirementsFor(request);
      const { presented, unit, metering } = this.meteredPayment(
        decodeV2Payment(header.value),
        offered,
        terms.maxBudget,
      );
      terms.admit?.(metering.payerOf(presented));
      const account = await metering.openMetered(
        presented,
        saleContextOf(request, reply),
        unit.toString(),
      );
      return this.sale(account, unit, unpaid, (payload) => {
        const topUp = this.meteredPayment(payload, offered, terms.maxBudget);
        if (topUp.presented.requirement.network !== account.network) {
          throw new PaymentRefusedError('stream_foreign_account: pay on the stream’s own network');
        }
        return topUp.presented;
      });
    } catch (error) {
      throw this.refusal(request, unpaid, error);
    }
  }

  /** What a refused or malformed payment is answered with. */
  private refusal(request: FastifyRequest, unpaid: PaymentChallenge, error: unknown): unknown {
    if (error instanceof PaymentRefusedError) {
      this.metrics.paymentRefused(routeOf(request), error.reason);
      return challengeResponse(withReason(unpaid, error.reason));
    }
    return asPaymentError(error, this.logger);
  }

  /** The offer a payment answers, with its budget as `amount`, and the scheme that meters it. */
  private meteredPayment(
    payload: PaymentPayload,
    offered: readonly PaymentRequirements[],
    maxBudget: bigint,
  ): {
    presented: { payload: PaymentPayload; version: 2; requirement: PaymentRequirements };
    unit: bigint;
    metering: MeteringScheme;
  } {
    const accepted: unknown = payload.accepted;
    const amount = isRecord(accepted) ? accepted['amount'] : undefined;
    if (typeof amount !== 'string' || !POSITIVE_INTEGER.test(amount)) {
      throw new PaymentRefusedError(
        'stream_budget_invalid: `accepted.amount` is the budget, a positive whole number of atomic units',
      );
    }
    const requirement = offeredRequirement(
      payload,
      offered.map((offer) => ({ ...offer, amount })),
    );
    const offer = offered.find(
      (candidate) =>
        candidate.scheme === requirement.scheme && candidate.network === requirement.network,
    );
    const plugin = this.schemes.named(requirement.scheme, requirement.network);
    if (offer === undefined || plugin?.metering === undefined) {
      throw new PaymentRefusedError(
        `unsupported_scheme: ${requirement.scheme} cannot pay per unit`,
      );
    }
    const unit = BigInt(offer.amount);
    const budget = BigInt(amount);
    if (budget % unit !== 0n || budget > maxBudget) {
      throw new PaymentRefusedError(
        `stream_budget_invalid: the budget (${amount}) must be a multiple of the unit price ` +
          `(${unit}) and at most ${maxBudget}`,
      );
    }
    return { presented: { payload, version: 2, requirement }, unit, metering: plugin.metering };
  }

  private sale(
    account: MeteredAccount,
    unit: bigint,
    unpaid: PaymentChallenge,
    topUpOf: (payload: PaymentPayload) => {
      payload: PaymentPayload;
      version: 2;
      requirement: PaymentRequirements;
    },
  ): MeteredSale {
    let ended = false;
    const required = unpaid.required;
    return {
      accountId: account.accountId,
      payer: account.payer,
      network: account.network,
      unitPrice: unit.toString(),
      charged: account.charged,
      covered: account.covered,
      async charge(item?: ChargedUnit): Promise<MeteredCharge> {
        if (ended) return { kind: 'refused', reason: 'sale_ended' };
        const charge = await account.charge(item);
        return charge.kind === 'exhausted' ? { ...charge, required } : charge;
      },
      takeBack: (charge) => account.takeBack(charge),
      resend: (seen, labels) => account.takeResend(seen, labels),
      topUp: async (header) => {
        try {
          return await account.raise(topUpOf(decodeV2Payment(header)));
        } catch (error) {
          if (error instanceof PaymentRefusedError) {
            throw challengeResponse(withReason(unpaid, error.reason));
          }
          throw asPaymentError(error, this.logger);
        }
      },
      end: () => {
        ended = true;
        account.end();
      },
    };
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A metered route asked of a deployment that sells no scheme able to meter. */
export function meteringUnavailable(): ApiError {
  return new ApiError(
    ErrorCode.StreamsUnavailable,
    'This route is paid per update through batch-settlement payment channels, which this deployment does not sell.',
  );
}
