import type { INestApplication } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { HTTP_SETTINGS, type HttpSettings } from '../../common/server.settings.js';
import { PaidRouteExplorer } from './paid-routes.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../payments.settings.js';
import { documentPaidOperations, documentSecuritySchemes } from './paywall-docs.js';
import { SchemeRegistry } from './scheme-registry.js';
import { X402Paywall } from './x402-paywall.js';

/**
 * Puts every `@Paid` route of the app on sale: the document gets the x402 security schemes and
 * each paid operation's price and 402 example, and the paywall builds its route table (with the
 * schemas buyers discover) from that document. Call once, after generating the OpenAPI document
 * and before `listen`; without it the app refuses to start.
 */
export function installPaywall(app: INestApplication, document: OpenAPIObject): void {
  const payments = app.get<PaymentConfig>(PAYMENT_SETTINGS.token);
  const http = app.get<HttpSettings>(HTTP_SETTINGS.token);
  documentSecuritySchemes(document);
  documentPaidOperations(
    document,
    app.get(PaidRouteExplorer).explore(),
    { payments, schemes: app.get(SchemeRegistry).offered() },
    payments.publicUrl ?? `http://localhost:${http.port}`,
  );
  app.get(X402Paywall).describe(document);
}
