import type { OpenAPIObject } from '@nestjs/swagger';
import type { PaymentRequired } from '@x402/core/types';
import type { PaymentConfig } from '../payments/payments.settings.js';
import { describeRoute } from '../payments/discovery.js';
import type { PaidRoute } from '../payments/paid-routes.js';
import { usdToAtomic } from '../payments/usd-amount.js';
import { toV1PaymentRequired } from '../payments/x402-wire.js';

type Json = Record<string, unknown>;

/**
 * Gives each paid operation its price in the summary (so the operation list shows it) and its
 * own 402 example: the challenge a request to its example path gets under this configuration.
 * The decorators cannot: one 402 schema serves every route.
 */
export function documentPaidOperations(
  document: OpenAPIObject,
  routes: readonly PaidRoute[],
  payments: PaymentConfig,
  baseUrl: string,
): void {
  for (const route of routes) {
    const operation = operationOf(document, route);
    operation.summary = `${String(operation.summary)} (${route.price} per request)`;
    const json = ((operation.responses as Json)['402'] as Json | undefined)?.content as
      Json | undefined;
    const media = json?.['application/json'] as Json | undefined;
    if (media === undefined) throw new Error(`${route.handler} documents no JSON 402`);
    media.example = challengeExample(document, route, payments, baseUrl);
  }
}

function challengeExample(
  document: OpenAPIObject,
  route: PaidRoute,
  payments: PaymentConfig,
  baseUrl: string,
): ReturnType<typeof toV1PaymentRequired> {
  const description = describeRoute(document, route);
  const params = description.pathParamsExample ?? {};
  const path = route.path.replace(/:([A-Za-z0-9_]+)/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${route.handler} has no example for :${name}`);
    return value;
  });
  const { asset } = payments;
  const required: PaymentRequired = {
    x402Version: 2,
    error: 'Payment required',
    resource: {
      url: `${baseUrl}${path}`,
      description: description.summary,
      mimeType: 'application/json',
    },
    accepts: [
      {
        scheme: 'exact',
        network: payments.network,
        asset: asset.address,
        amount: usdToAtomic(route.price, asset.decimals),
        payTo: payments.payTo,
        maxTimeoutSeconds: payments.maxTimeoutSeconds,
        extra: { name: asset.name, version: asset.version },
      },
    ],
  };
  return toV1PaymentRequired(required, {
    input: { type: 'http', method: route.method, discoverable: true },
    output: description.outputSchema,
  });
}

function operationOf(document: OpenAPIObject, route: PaidRoute): Json {
  const openApiPath = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  const operation = (document.paths[openApiPath] as Json | undefined)?.[
    route.method.toLowerCase()
  ] as Json | undefined;
  if (operation === undefined) throw new Error(`${route.handler} is missing from the document`);
  return operation;
}
