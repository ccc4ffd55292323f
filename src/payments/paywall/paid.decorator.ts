import {
  SetMetadata,
  UseGuards,
  UseInterceptors,
  applyDecorators,
  type Type,
} from '@nestjs/common';
import { ApiExtension, ApiOkResponse, ApiResponse, ApiSecurity } from '@nestjs/swagger';
import { ErrorCode } from '../../common/api-error.js';
import { ApiProblemResponse } from '../../common/api-problem-responses.js';
import {
  ANSWER_RESOLVER,
  resolverGuard,
  type AnswerResolverType,
} from '../../paid-answers/index.js';
import { PAID_PRICE, type UsdPrice } from './paid-price.js';
import { PaymentRequiredDto } from './payment-required.dto.js';
import { PaymentGuard } from './payment.guard.js';
import { PresentedPaymentGuard } from './presented-payment.guard.js';
import { SettlementInterceptor } from './settlement.interceptor.js';

export const X402_SECURITY = 'x402';
export const X402_V1_SECURITY = 'x402-v1';

/** What a paid route sells: its price and the body a paying client gets for it. */
export interface PaidOptions {
  /** In USD as x402 writes it, e.g. `$0.002`; positive, at most the token's decimals. */
  readonly price: UsdPrice;
  /** The DTO of the 200 body: documented, and the schema buyers discover through the 402. */
  readonly response: Type<unknown>;
  /** What the 200 holds, for the OpenAPI document. */
  readonly description: string;
  /**
   * Checks and resolves the request before any 402 (`AnswerResolver`): its refusals (400, 404,
   * 503) are answered with nothing offered and nothing charged; the handler reads its value
   * with `@Resolved()`. A provider of the route's module.
   */
  readonly resolver?: AnswerResolverType;
}

const USD_PRICE = /^\$(\d+)(?:\.(\d+))?$/;

/**
 * Sells a route per request through x402: records the price, refuses a payment header that
 * cannot be decoded, resolves the request (when the route names a resolver), guards the route
 * with challenge + verify, settles after the handler,
 * and documents the 200, the 402, the 409/502 and the price. Everything a paid route needs comes
 * from here; a malformed price fails at class definition.
 */
export function Paid({ price, response, description, resolver }: PaidOptions): MethodDecorator {
  const decorate = applyDecorators(
    ...(resolver === undefined ? [] : [SetMetadata(ANSWER_RESOLVER, resolver)]),
    // a payment header that cannot be decoded is refused before the resolver asks anything of
    // anyone; then the resolver: nothing is offered for a request that cannot be answered
    UseGuards(
      PresentedPaymentGuard,
      ...(resolver === undefined ? [] : [resolverGuard(resolver)]),
      PaymentGuard,
    ),
    paidDecorators(price, response, description),
  );
  return (target, key, descriptor) => {
    assertUsdPrice(price, `@Paid on ${target.constructor.name}.${String(key)}`);
    decorate(target, key, descriptor);
  };
}

/** Fails class definition for a price that is not a positive USD amount such as `$0.002`. */
export function assertUsdPrice(price: string, where: string): void {
  const match = USD_PRICE.exec(price);
  if (match === null || /^0*$/.test(`${match[1] ?? ''}${match[2] ?? ''}`)) {
    throw new Error(`${where}: "${price}" is not a positive USD price such as $0.002`);
  }
}

function paidDecorators(
  price: UsdPrice,
  response: Type<unknown>,
  description: string,
): MethodDecorator {
  return applyDecorators(
    SetMetadata(PAID_PRICE, price),
    ApiOkResponse({ type: response, description }),
    UseInterceptors(SettlementInterceptor),
    ApiExtension('x-x402-price', { amount: price.slice(1), currency: 'USD' }),
    ApiSecurity(X402_SECURITY),
    ApiSecurity(X402_V1_SECURITY),
    ApiResponse({
      status: 402,
      description:
        `Payment required: ${price} per request in USDC. The \`PAYMENT-REQUIRED\` header carries the x402 v2 ` +
        'requirements (base64 JSON); the body carries the same in x402 v1 shape. Also returned, with the ' +
        'reason in `error`, when a payment is refused or fails to settle; nothing is charged then.',
      type: PaymentRequiredDto,
      headers: {
        'PAYMENT-REQUIRED': {
          description: 'x402 v2 PaymentRequired, base64 JSON.',
          schema: { type: 'string' },
        },
      },
    }),
    ApiProblemResponse(409, {
      description: 'The payment-identifier was already used with a different payment. Not charged.',
      codes: [ErrorCode.PaymentIdConflict],
    }),
    ApiProblemResponse(502, {
      description:
        'The facilitator started a settlement and never confirmed it (`settlement_unknown`): the ' +
        'payment may have been taken and is refused from then on; retry with the same ' +
        'payment-identifier to receive the response if it settled.',
      codes: [ErrorCode.SettlementUnknown],
    }),
  );
}
