import type { FastifyInstance, onResponseHookHandler, RouteOptions } from 'fastify';
import type { HttpAnswers, RouteAnswers } from './http-answers.js';

/** Requests that matched no route share one label, so probing random paths cannot add series. */
const UNMATCHED = 'unmatched';

/**
 * Counts every answer by method, route pattern and status, with its duration. Each route gets an
 * `onResponse` hook of its own that knows its pattern (`request.routeOptions` builds a new object
 * on every read); one global hook counts what no route answered. Call before any route is
 * registered (plugins' routes included), so that every route is counted.
 */
export function installHttpMetrics(fastify: FastifyInstance, answers: HttpAnswers): void {
  fastify.addHook('onRoute', (route) => {
    route.onResponse = [...hooksOf(route.onResponse), countedIn(answers.route(route.url))];
  });
  const unmatched = answers.route(UNMATCHED);
  fastify.addHook('onResponse', (request, reply, done) => {
    if (request.is404)
      unmatched.answered(request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

function countedIn(route: RouteAnswers): onResponseHookHandler {
  return function countAnswer(request, reply, done) {
    route.answered(request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  };
}

function hooksOf(hooks: RouteOptions['onResponse']): onResponseHookHandler[] {
  return hooks === undefined ? [] : [hooks].flat();
}
