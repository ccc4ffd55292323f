import { SetMetadata, applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { PRICE_ATTESTATION_HEADER } from './price-attestation.js';

export const ATTESTED = Symbol('Attested');

export const PRICE_ATTESTATION_HEADER_DOC = {
  description:
    'EIP-712 signature of this answer by the service (signer, domain and types at ' +
    'GET /.well-known/price-attestation): base64 of JSON `{message, signature}`, `message` being ' +
    '`{currency, timestamp (epoch ms), prices: [{symbol, price (8-decimal fixed point, decimal ' +
    'string), venues, spreadBps}]}` in the order of the body. Only on a 200 (absent with ' +
    'ATTESTATION=off).',
  schema: { type: 'string' },
} as const;

/**
 * Marks a paid price route whose 200 carries a `Price-Attestation` header (added by
 * PriceAttestationInterceptor once the answer is sold) and documents the header.
 */
export function Attested(): MethodDecorator {
  return applyDecorators(
    SetMetadata(ATTESTED, true),
    ApiResponse({
      status: 200,
      headers: { [PRICE_ATTESTATION_HEADER]: PRICE_ATTESTATION_HEADER_DOC },
    }),
  );
}
