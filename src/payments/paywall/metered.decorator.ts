import { SetMetadata, UseGuards, applyDecorators } from '@nestjs/common';
import { ApiExtension, ApiOkResponse, ApiResponse, ApiSecurity } from '@nestjs/swagger';
import {
  ANSWER_RESOLVER,
  resolverGuard,
  type AnswerResolverType,
} from '../../paid-answers/index.js';
import { METERED_UNIT, PAID_PRICE, type UsdPrice } from './paid-price.js';
import { X402_SECURITY, assertUsdPrice } from './paid.decorator.js';
import { PaymentRequiredDto } from './payment-required.dto.js';
import { DecodedPaymentGuard } from './presented-payment.guard.js';

/** What a metered route sells: a price per unit delivered on one long answer. */
export interface MeteredOptions {
  /** In USD per unit, as x402 writes it, e.g. `$0.0001`. */
  readonly price: UsdPrice;
  /** What one unit is (`update`): offers carry it as `extra.stream.unit`. */
  readonly unit: string;
  /** What the `text/event-stream` 200 carries, for the OpenAPI document. */
  readonly description: string;
  /** Checks and resolves the request before any 402, as `@Paid`'s resolver does. */
  readonly resolver?: AnswerResolverType;
}

/**
 * Sells a route per unit delivered through x402 (MeteredSale): records the unit price, resolves
 * the request before any 402, and documents the `text/event-stream` 200 and the 402 offering
 * only the schemes that can meter. The handler opens the sale itself (MeteredIntake.open): the
 * answer is a stream, charged unit by unit while it is written, never settled as one body.
 */
export function Metered({ price, unit, description, resolver }: MeteredOptions): MethodDecorator {
  const decorate = applyDecorators(
    SetMetadata(PAID_PRICE, price),
    SetMetadata(METERED_UNIT, unit),
    // junk in a payment header is a 400 before the resolver runs, as on the paid routes
    UseGuards(DecodedPaymentGuard),
    ...(resolver === undefined
      ? []
      : [SetMetadata(ANSWER_RESOLVER, resolver), UseGuards(resolverGuard(resolver))]),
    ApiOkResponse({
      description,
      content: { 'text/event-stream': { schema: { type: 'string' } } },
    }),
    ApiExtension('x-x402-price', { amount: price.slice(1), currency: 'USD', per: unit }),
    ApiSecurity(X402_SECURITY),
    ApiResponse({
      status: 402,
      description:
        `Payment required: ${price} per ${unit} delivered, in USDC through a payment channel ` +
        '(`batch-settlement` only: a one-off transfer cannot pay per update). The ' +
        '`PAYMENT-REQUIRED` header carries the x402 v2 requirements (base64 JSON), `amount` ' +
        `being the price of one ${unit}; pay a voucher for a budget that is a multiple of it. ` +
        'Also returned, with the reason in `error`, when a payment is refused; nothing is charged then.',
      type: PaymentRequiredDto,
      headers: {
        'PAYMENT-REQUIRED': {
          description: 'x402 v2 PaymentRequired, base64 JSON.',
          schema: { type: 'string' },
        },
      },
    }),
  );
  return (target, key, descriptor) => {
    assertUsdPrice(price, `@Metered on ${target.constructor.name}.${String(key)}`);
    decorate(target, key, descriptor);
  };
}
