import type { OpenAPIObject } from '@nestjs/swagger';
import type { PaymentRequired } from '@x402/core/types';
import { describeRoute } from './discovery.js';
import { X402_SECURITY, X402_V1_SECURITY } from './paid.decorator.js';
import type { PaidRoute } from './paid-routes.js';
import type { PaymentConfig } from '../payments.settings.js';
import { soldNetworks } from '../networks/sold-networks.js';
import { offerFor, requirementOf } from './route-offers.js';
import type { SellerSchemePlugin } from './seller-scheme.js';
import { toV1PaymentRequired } from './x402-wire.js';

type Json = Record<string, unknown>;

/** The two ways a client presents a payment, as OpenAPI security schemes `@Paid` refers to. */
export function documentSecuritySchemes(document: OpenAPIObject): void {
  document.components ??= {};
  document.components.securitySchemes = {
    ...document.components.securitySchemes,
    [X402_SECURITY]: {
      type: 'apiKey',
      in: 'header',
      name: 'PAYMENT-SIGNATURE',
      description:
        'x402 v2 payment: base64 JSON PaymentPayload signed for one of the requirements in the ' +
        '402 `PAYMENT-REQUIRED` header (EIP-3009 transferWithAuthorization of USDC). The receipt ' +
        'comes back in `PAYMENT-RESPONSE`.',
    },
    [X402_V1_SECURITY]: {
      type: 'apiKey',
      in: 'header',
      name: 'X-PAYMENT',
      description:
        'x402 v1 payment (`x402-fetch` 1.x): base64 JSON payload for one of the `accepts` in the ' +
        '402 body. The receipt comes back in `X-PAYMENT-RESPONSE`.',
    },
  };
}

/**
 * Gives each paid operation its price in the summary (so the operation list shows it) and its
 * own 402 example: the challenge a request to its example path gets under this configuration.
 * The decorators cannot: one 402 schema serves every route.
 */
export function documentPaidOperations(
  document: OpenAPIObject,
  routes: readonly PaidRoute[],
  sale: { readonly payments: PaymentConfig; readonly schemes: readonly SellerSchemePlugin[] },
  baseUrl: string,
): void {
  for (const route of routes) {
    const operation = operationOf(document, route);
    const per = `${route.price} per ${route.meteredUnit ?? 'request'}`;
    operation.summary =
      typeof operation.summary === 'string' ? `${operation.summary} (${per})` : per;
    const json = ((operation.responses as Json)['402'] as Json | undefined)?.content as
      Json | undefined;
    const media = json?.['application/json'] as Json | undefined;
    if (media === undefined) throw new Error(`${route.handler} documents no JSON 402`);
    const required = challengeOf(document, route, sale, baseUrl);
    media.example = bodyExample(document, route, sale, required);
    documentChallengeHeader((operation.responses as Json)['402'] as Json, required);
  }
}

/**
 * The 402's `PAYMENT-REQUIRED` header example: the v2 challenge as sent, which offers every
 * scheme (the v1 body only those a v1 client can pay, so not `batch-settlement`).
 */
function documentChallengeHeader(response: Json, required: PaymentRequired): void {
  const headers = (response.headers ?? {}) as Json;
  const header = (headers['PAYMENT-REQUIRED'] ?? {}) as Json;
  const offered = [...new Set(required.accepts.map((accept) => `\`${accept.scheme}\``))];
  response.headers = {
    ...headers,
    'PAYMENT-REQUIRED': {
      ...header,
      description: `x402 v2 PaymentRequired, base64 JSON; it offers ${offered.join(' and ')}.`,
      example: Buffer.from(JSON.stringify(required)).toString('base64'),
    },
  };
}

/** The v2 challenge a request to the route's example path gets under this configuration. */
function challengeOf(
  document: OpenAPIObject,
  route: PaidRoute,
  { payments, schemes }: Parameters<typeof documentPaidOperations>[2],
  baseUrl: string,
): PaymentRequired {
  const description = describeRoute(document, route);
  const params = description.pathParamsExample ?? {};
  const path = route.path.replace(/:([A-Za-z0-9_]+)/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${route.handler} has no example for :${name}`);
    return value;
  });
  return {
    x402Version: 2,
    error: 'Payment required',
    resource: {
      url: `${baseUrl}${path}`,
      description: description.summary,
      mimeType: route.meteredUnit === undefined ? 'application/json' : 'text/event-stream',
    },
    accepts: soldNetworks(payments).flatMap((sold) =>
      schemes
        .filter(
          (plugin) =>
            plugin.serves(sold.network) &&
            (route.meteredUnit === undefined || plugin.metering !== undefined),
        )
        .map(({ scheme }) =>
          requirementOf(offerFor(route, scheme, sold, payments.maxTimeoutSeconds)),
        ),
    ),
  };
}

/** The v1-shaped body beside the header: the offers a v1 client can pay. */
function bodyExample(
  document: OpenAPIObject,
  route: PaidRoute,
  { schemes }: Parameters<typeof documentPaidOperations>[2],
  required: PaymentRequired,
): ReturnType<typeof toV1PaymentRequired> {
  return toV1PaymentRequired(
    required,
    {
      input: { type: 'http', method: route.method, discoverable: true },
      output: describeRoute(document, route).outputSchema,
    },
    (scheme, network) =>
      schemes.some(
        (plugin) => plugin.scheme === scheme && plugin.serves(network) && plugin.offeredToV1,
      ),
  );
}

function operationOf(document: OpenAPIObject, route: PaidRoute): Json {
  const openApiPath = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  const operation = (document.paths[openApiPath] as Json | undefined)?.[
    route.method.toLowerCase()
  ] as Json | undefined;
  if (operation === undefined)
    throw new Error(`${route.handler} is missing from the OpenAPI document`);
  return operation;
}
