import type { INestApplication } from '@nestjs/common';
import { GUARDS_METADATA } from '@nestjs/common/constants.js';
import type { FastifyRequest } from 'fastify';
import type { FastRoute, PreparedAnswer } from '../common/fast-answers.js';
import type { PreparedResponseException } from '../common/prepared-response.exception.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { challengeResponse, routeOf } from '../payments/payment-errors.js';
import { PaidRouteExplorer } from '../payments/paid-routes.js';
import { PaymentGuard } from '../payments/payment.guard.js';
import { X402Paywall } from '../payments/x402-paywall.js';
import { presentedPaymentHeader } from '../payments/x402-wire.js';
import { TickerQuotesService } from './ticker-quotes.service.js';
import { TickerRequestGuard, selectionKindOf, selectionOf } from './ticker-request.guard.js';
import { TickersController } from './tickers.controller.js';

/**
 * The 402 of an unpaid ticker request, answered before Nest's pipeline (common/fast-answers.ts).
 * It is what the pipeline answers: after the rate limit, TickerRequestGuard resolves the quotes
 * (400, 404, 503 otherwise) and PaymentGuard, finding no payment header, counts the challenge
 * and throws the paywall's prepared 402, which the exception filter sends unchanged. Anything
 * else (a payment, a symbol refused, no price, the facilitator not ready) goes through Nest.
 * Only ticker routes guarded exactly so get one: another guard would be skipped.
 */
export function unpaidTickerRoutes(app: INestApplication): FastRoute[] {
  const quotes = app.get(TickerQuotesService);
  const paywall = app.get(X402Paywall);
  const metrics = app.get(MetricsService);
  if (!guardedBy(TickersController, [TickerRequestGuard])) return [];
  const prototype = TickersController.prototype as unknown as Record<
    string,
    (...args: never[]) => unknown
  >;
  return app
    .get(PaidRouteExplorer)
    .explore()
    .flatMap((route) => {
      const [controller, name] = route.handler.split('.');
      const handler = name === undefined ? undefined : prototype[name];
      const kind = handler === undefined ? undefined : selectionKindOf(handler);
      if (
        controller !== TickersController.name ||
        route.method !== 'GET' ||
        handler === undefined ||
        kind === undefined ||
        !guardedBy(handler, [PaymentGuard])
      ) {
        return [];
      }
      const answer = async (request: FastifyRequest): Promise<PreparedAnswer | undefined> => {
        if (presentedPaymentHeader((name) => single(request.headers[name])) !== undefined) {
          return undefined;
        }
        await quotes.check(selectionOf(kind, request.params as Record<string, string>));
        const challenge = await paywall.challenge(request);
        metrics.paymentChallenged(routeOf(request));
        return preparedAnswerOf(challengeResponse(challenge));
      };
      return [{ url: route.path, paid: true, answer }];
    });
}

/** One answer per challenge, like the exception it comes from: the fast path keeps its bytes. */
const preparedAnswers = new WeakMap<PreparedResponseException, PreparedAnswer>();

function preparedAnswerOf(challenge: PreparedResponseException): PreparedAnswer {
  let prepared = preparedAnswers.get(challenge);
  if (prepared === undefined) {
    prepared = {
      status: challenge.getStatus(),
      headers: challenge.headers,
      body: challenge.body as string,
    };
    preparedAnswers.set(challenge, prepared);
  }
  return prepared;
}

function guardedBy(target: object, expected: readonly unknown[]): boolean {
  const guards = (Reflect.getMetadata(GUARDS_METADATA, target) ?? []) as unknown[];
  return guards.length === expected.length && guards.every((guard, i) => guard === expected[i]);
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
