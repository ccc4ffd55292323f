import type { Logger } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from '../../common/api-error.js';
import { PreparedResponseException } from '../../common/prepared-response.exception.js';
import { FacilitatorUnavailableError } from '../facilitator/facilitator-client.js';
import type { OpenSale } from './seller-scheme.js';
import type { PaymentChallenge } from './challenges.js';
import { MalformedPaymentError } from './x402-wire.js';

/** A paid call that is not the HTTP request itself (an MCP tool call on `POST /mcp`). */
export interface PaidCall {
  /** How metrics and payment logs name it (`mcp:get_ticker`), as they name a route. */
  readonly route: string;
  /** What a payment-identifier is bound to: a tool call is not its HTTP route's resource. */
  readonly resource: string;
  /** The resource its payment must name (`mcp://tool/get_ticker`), never an HTTP route's. */
  readonly resourceUrl: string;
  /** Aborts when the call is cancelled, its answer no longer deliverable: nothing is settled. */
  readonly signal: AbortSignal;
  /**
   * Marks the call's settlement as begun, unless the call was cancelled first (false): from then
   * on it is not cancelled, and its outcome is delivered.
   */
  readonly beginSettlement: () => boolean;
}

/** What a transport names a paid call by (see PaidCall). */
export type PaidCallNames = Pick<PaidCall, 'route' | 'resource' | 'resourceUrl'>;

/** A paid request after the payment guard: the sale its scheme opened, for the interceptor. */
export type RequestWithPayment = FastifyRequest & {
  x402Sale?: OpenSale;
  x402Call?: PaidCall;
  /**
   * Set by whoever counted the request on arrival (the rate limit): told once its payment opened
   * a sale, before the handler, so the count can be taken back.
   */
  x402SaleOpened?: () => Promise<void>;
};

/**
 * The paid route's pattern (`/v1/ticker/:symbol`), or the tool (`mcp:get_ticker`), as metrics
 * and payment logs name it.
 */
export function routeOf(request: FastifyRequest): string {
  return (request as RequestWithPayment).x402Call?.route ?? request.routeOptions.url ?? request.url;
}

/** Prepared 402s of the paywall's cached challenges: they never change, so neither does this. */
const preparedChallenges = new WeakMap<PaymentChallenge, PreparedResponseException>();

/**
 * The 402 challenge as a response the exception filter sends unchanged, its body serialized
 * once. A cached challenge gets the same exception every time: it is immutable, and capturing
 * a fresh stack for each 402 costs more than sending it.
 */
export function challengeResponse(challenge: PaymentChallenge): PreparedResponseException {
  let prepared = preparedChallenges.get(challenge);
  if (prepared === undefined) {
    prepared = new PreparedResponseException(402, JSON.stringify(challenge.body), {
      ...challenge.headers,
      'content-type': 'application/json; charset=utf-8',
      // the offer names this moment's price and deadline: no cache may replay it
      'cache-control': 'no-store',
    });
    preparedChallenges.set(challenge, prepared);
  }
  return prepared;
}

/** Maps what can go wrong around a payment to what the client should see; nothing is charged. */
export function asPaymentError(error: unknown, logger: Logger): unknown {
  if (error instanceof MalformedPaymentError) return malformedPayment(error);
  if (error instanceof FacilitatorUnavailableError) {
    logger.warn(error.message);
    return new ApiError(
      ErrorCode.FacilitatorUnavailable,
      'The payment facilitator cannot be reached right now; nothing was charged.',
      { 'retry-after': '5' },
    );
  }
  return error;
}

/** A payment header or payload that cannot be read: a 400, nothing offered or charged. */
export function malformedPayment(error: MalformedPaymentError): ApiError {
  return new ApiError(ErrorCode.InvalidPayment, `Malformed payment: ${error.message}.`);
}

/** Settlement was attempted but not confirmed: the money may have moved. */
export function settlementUnknown(transaction: string | undefined, reason: string): ApiError {
  const tx = transaction === undefined || transaction === '' ? '' : ` (transaction ${transaction})`;
  return new ApiError(
    ErrorCode.SettlementUnknown,
    `The settlement could not be confirmed${tx}: ${reason}. The payment may have been taken; ` +
      'it will not be accepted again. Its outcome is checked on chain: retry with the same ' +
      'payment-identifier to receive the response if it settled, or check the transaction before paying again.',
    { 'retry-after': '5' },
  );
}

/**
 * A payment whose earlier settlement is still unknown, presented again (with or without its
 * payment-identifier): never a 402, which would invite an automatic client to pay a second time.
 */
export function settlementStillUnknown(): ApiError {
  return new ApiError(
    ErrorCode.SettlementUnknown,
    'payment_outcome_unknown: the settlement of this payment could not be confirmed and is still ' +
      'being checked on chain; retry the same payment with its payment-identifier later. Do not ' +
      'pay again before it is resolved.',
    { 'retry-after': '5' },
  );
}
