import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { documentRateLimits } from '../rate-limit/rate-limit-docs.js';

export const OPENAPI_VERSION = '3.1.0';
export const API_VERSION = '1.0.0';

/** How "Try it out" pays on a paid operation: the local stack's test buyer, or a browser wallet. */
export function tryItOutText(localBuyer: boolean): string {
  return localBuyer
    ? 'In this page, "Try it out" on a paid operation pays as the local stack\'s test buyer ' +
        '(test USDC on the local chain, no wallet needed); the receipt is shown with the ' +
        "operation's response."
    : 'In this page, "Try it out" on a paid operation pays with your browser wallet (EIP-1193): ' +
        "it signs the offered USDC transfer and the receipt is shown with the operation's response.";
}

/**
 * Generates the OpenAPI document from the controllers; no traffic is served to build it. Paid
 * operations get their prices, 402 examples and security schemes from `installPaywall`. A test
 * deployment's `notice` (the local stack's) opens the description; `localBuyer` says who pays
 * from the docs page.
 */
export function buildOpenApiDocument(
  app: INestApplication,
  notice?: string,
  localBuyer = false,
): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion(OPENAPI_VERSION)
    .setTitle('x402 Crypto Price API')
    .setDescription(
      (notice === undefined ? '' : `**${notice}**\n\n`) +
        'Current cryptocurrency prices in USD, aggregated from several public market venues ' +
        '(median of the venues that agree, stale and outlying quotes dropped). No accounts and no ' +
        'API keys: each priced request is paid on its own with the x402 protocol, in USDC on Base. ' +
        'Errors are application/problem+json (RFC 9457) with a stable `code`; requests that fail ' +
        'validation or cannot be answered are never charged. ' +
        tryItOutText(localBuyer),
    )
    .setVersion(API_VERSION)
    .addTag('assets', 'What can be priced (free)')
    .addTag('tickers', 'Prices, paid per request with x402')
    .addTag('sources', 'Where prices come from (free)')
    .addTag('health', 'Liveness and readiness (free)')
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (_controller, method) => method,
  });
  documentRateLimits(app, document);
  return document;
}
