import { SetMetadata, UseInterceptors, applyDecorators } from '@nestjs/common';
import { PRICE_ATTESTATION_HEADER } from './price-attestation.js';
import { PriceAttestationInterceptor } from './price-attestation.interceptor.js';

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
 * Signs a paid route's answer: its 200 carries a `Price-Attestation` header over what the
 * route's resolved answer claims (`AttestableAnswer`), and the header is documented. Only this
 * route pays for the interceptor; start-up refuses it on a route without `@Paid({ resolver })`.
 */
export function Attested(): MethodDecorator {
  return applyDecorators(
    SetMetadata(ATTESTED, true),
    UseInterceptors(PriceAttestationInterceptor),
    documentHeaderOn200,
  );
}

/** @nestjs/swagger's response metadata key (its constants module is not exported). */
const API_RESPONSE = 'swagger/apiResponse';

type ResponsesMetadata = Record<string, { headers?: Record<string, unknown> } | undefined>;

/**
 * Adds the header to the 200's documentation and nothing else: `ApiResponse` would reset the
 * 200's `type` that `@Paid` gave it, whichever of the two runs first.
 */
const documentHeaderOn200: MethodDecorator = (_target, _key, descriptor) => {
  const handler = descriptor.value as object;
  const responses = (Reflect.getMetadata(API_RESPONSE, handler) ?? {}) as ResponsesMetadata;
  const ok = responses['200'] ?? {};
  Reflect.defineMetadata(
    API_RESPONSE,
    {
      ...responses,
      200: {
        ...ok,
        headers: { ...ok.headers, [PRICE_ATTESTATION_HEADER]: PRICE_ATTESTATION_HEADER_DOC },
      },
    },
    handler,
  );
};
