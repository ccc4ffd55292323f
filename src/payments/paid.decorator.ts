import { SetMetadata, applyDecorators } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';

/** A price in USD as x402 writes it, e.g. `$0.002`. */
export type UsdPrice = `$${number}`;

export const PAID_PRICE = Symbol('PaidPrice');

/**
 * Marks a route as sold per request for `price`, paid through x402, and documents the price.
 */
export function Paid(price: UsdPrice): MethodDecorator {
  return applyDecorators(
    SetMetadata(PAID_PRICE, price),
    ApiExtension('x-x402-price', { amount: price.slice(1), currency: 'USD' }),
  );
}
