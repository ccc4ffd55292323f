import { SetMetadata, UseGuards, UseInterceptors, applyDecorators } from '@nestjs/common';
import { ApiExtension, ApiResponse, ApiSecurity } from '@nestjs/swagger';
import { ErrorCode } from '../common/api-error.js';
import { ApiProblemResponse } from '../common/api-problem-responses.js';
import { PAID_PRICE, type UsdPrice } from './paid-price.js';
import { PaymentRequiredDto } from './payment-required.dto.js';
import { PaymentGuard } from './payment.guard.js';
import { SettlementInterceptor } from './settlement.interceptor.js';

export const X402_SECURITY = 'x402';
export const X402_V1_SECURITY = 'x402-v1';

/**
 * Sells a route per request for `price` through x402: records the price, guards the route with
 * challenge + verify, settles after the handler, and documents the 402 and the price.
 */
export function Paid(price: UsdPrice): MethodDecorator {
  return applyDecorators(
    SetMetadata(PAID_PRICE, price),
    UseGuards(PaymentGuard),
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
