import type { INestApplication } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { DECORATORS, type OpenAPIObject } from '@nestjs/swagger';
import { ErrorCode } from '../common/api-error.js';
import { problemResponse } from '../common/api-problem-responses.js';
import { PAID_PRICE } from '../payments/index.js';
import { LIMITED_AS_PAID, SKIP_RATE_LIMIT } from './skip-rate-limit.decorator.js';

const FREE_ROUTE_LIMIT =
  'Too many requests from this client address in the window (`rate_limited`; RATE_LIMIT_FREE ' +
  'per RATE_LIMIT_WINDOW_MS); ask again after `Retry-After` seconds.';
const PAID_ROUTE_LIMIT =
  'Too many requests that bought nothing from this client address in the window ' +
  '(`rate_limited`; RATE_LIMIT_UNPAID per RATE_LIMIT_WINDOW_MS); ask again after `Retry-After` ' +
  'seconds. Not charged.';

const PAID_ROUTE_EXAMPLE =
  'Too many requests to paid routes that bought nothing from 203.0.113.7: at most 120 per 60 s.';

type Operation = { operationId?: string; responses: Record<string, unknown> };

/**
 * Documents the 429 on every operation RateLimitGuard can answer it on: each handler not
 * exempted with @SkipRateLimit (the health probes). Read from the handlers' own metadata, as
 * the guard reads it, so the document cannot miss a limited route or list an exempt one.
 */
export function documentRateLimits(app: INestApplication, document: OpenAPIObject): void {
  const reflector = app.get(Reflector);
  const scanner = app.get(MetadataScanner);
  const operations = new Map<string, Operation>();
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item as Record<string, Operation>)) {
      if (operation.operationId !== undefined) operations.set(operation.operationId, operation);
    }
  }
  for (const wrapper of app.get(DiscoveryService).getControllers()) {
    const controller = wrapper.metatype as (new (...args: never[]) => object) | null;
    if (controller === null || typeof controller !== 'function') continue;
    const prototype = controller.prototype as Record<string, unknown>;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name] as (...args: unknown[]) => unknown;
      const exempt = reflector.getAllAndOverride<boolean | undefined>(SKIP_RATE_LIMIT, [
        handler,
        controller,
      ]);
      const id =
        reflector.get<{ operationId?: string } | undefined>(DECORATORS.API_OPERATION, handler)
          ?.operationId ?? name;
      const operation = operations.get(id);
      if (exempt === true || operation === undefined) continue;
      const paid =
        reflector.get<unknown>(PAID_PRICE, handler) !== undefined ||
        reflector.get<boolean | undefined>(LIMITED_AS_PAID, handler) === true;
      const limit = problemResponse({
        description: paid ? PAID_ROUTE_LIMIT : FREE_ROUTE_LIMIT,
        codes: [ErrorCode.RateLimited],
        ...(paid ? { details: { [ErrorCode.RateLimited]: PAID_ROUTE_EXAMPLE } } : {}),
      });
      const { ['429']: own, ...others } = operation.responses;
      operation.responses = withResponse(others, '429', withOwn429(own, limit));
    }
  }
}

type ProblemDoc = ReturnType<typeof problemResponse>;

/**
 * The rate limit's 429 joined to a 429 the route documents itself (a stream's per-payer limit):
 * both causes described, both codes' examples shown.
 */
function withOwn429(own: unknown, limit: ProblemDoc): ProblemDoc {
  if (own === undefined) return limit;
  const route = own as ProblemDoc;
  const media = 'application/problem+json';
  type Examples = NonNullable<ProblemDoc['content'][string]['examples']>;
  const examples = (doc: ProblemDoc): Examples => doc.content[media]?.examples ?? {};
  return {
    ...limit,
    description: `${route.description} Or: ${limit.description}`,
    content: {
      [media]: {
        ...limit.content[media],
        examples: { ...examples(route), ...examples(limit) },
      },
    },
  };
}

/** `responses` with `status` added in status order, `default` last. */
function withResponse(
  responses: Record<string, unknown>,
  status: string,
  response: unknown,
): Record<string, unknown> {
  const entries = [...Object.entries(responses), [status, response] as const];
  const rank = (key: string): number =>
    key === 'default' ? Number.POSITIVE_INFINITY : Number(key);
  return Object.fromEntries(entries.sort(([a], [b]) => rank(a) - rank(b)));
}
