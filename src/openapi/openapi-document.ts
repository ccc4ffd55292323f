import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { HTTP_SETTINGS, type HttpSettings } from '../common/server.settings.js';
import { X402_SECURITY, X402_V1_SECURITY } from '../payments/paid.decorator.js';
import { PaidRouteExplorer } from '../payments/paid-routes.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../payments/payments.settings.js';
import { documentPaidOperations } from './paid-operations.js';

export const OPENAPI_VERSION = '3.1.0';
export const API_VERSION = '1.0.0';

/** Generates the OpenAPI document from the controllers; no traffic is served to build it. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion(OPENAPI_VERSION)
    .setTitle('x402 Crypto Price API')
    .setDescription(
      'Current cryptocurrency prices in USD, aggregated from several public market venues ' +
        '(median of the venues that agree, stale and outlying quotes dropped). No accounts and no ' +
        'API keys: each priced request is paid on its own with the x402 protocol, in USDC on Base. ' +
        'Errors are application/problem+json (RFC 9457) with a stable `code`; requests that fail ' +
        'validation or cannot be answered are never charged. In this page, "Try it out" on a paid ' +
        'operation pays with your browser wallet (EIP-1193): it signs the offered USDC transfer and ' +
        'the receipt is shown above the page.',
    )
    .setVersion(API_VERSION)
    .addTag('assets', 'What can be priced (free)')
    .addTag('tickers', 'Prices, paid per request with x402')
    .addTag('sources', 'Where prices come from (free)')
    .addTag('health', 'Liveness and readiness (free)')
    .addSecurity(X402_SECURITY, {
      type: 'apiKey',
      in: 'header',
      name: 'PAYMENT-SIGNATURE',
      description:
        'x402 v2 payment: base64 JSON PaymentPayload signed for one of the requirements in the ' +
        '402 `PAYMENT-REQUIRED` header (EIP-3009 transferWithAuthorization of USDC). The receipt ' +
        'comes back in `PAYMENT-RESPONSE`.',
    })
    .addSecurity(X402_V1_SECURITY, {
      type: 'apiKey',
      in: 'header',
      name: 'X-PAYMENT',
      description:
        'x402 v1 payment (`x402-fetch` 1.x): base64 JSON payload for one of the `accepts` in the ' +
        '402 body. The receipt comes back in `X-PAYMENT-RESPONSE`.',
    })
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (_controller, method) => method,
  });
  const payments = app.get<PaymentConfig>(PAYMENT_SETTINGS.token);
  const http = app.get<HttpSettings>(HTTP_SETTINGS.token);
  documentPaidOperations(
    document,
    app.get(PaidRouteExplorer).explore(),
    payments,
    payments.publicUrl ?? `http://localhost:${http.port}`,
  );
  return document;
}
