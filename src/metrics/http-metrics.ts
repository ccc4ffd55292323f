import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { MetricsService } from './metrics.service.js';

/** Where a request that reached no handler belongs: a 405's path has a route, for other methods. */
export interface RouteLookup {
  routeOf(request: FastifyRequest): string | undefined;
}

/** Requests that matched no route share one label, so probing random paths cannot add series. */
const UNMATCHED = 'unmatched';

/**
 * Counts every answer by method, route pattern and status, with its duration; a 405 under the
 * pattern of the route its path has (`routes`). A plugin's routes get the hooks its instance had
 * when it was registered: call before any plugin is registered, so that every route is counted.
 */
export function installHttpMetrics(
  fastify: FastifyInstance,
  metrics: MetricsService,
  routes?: RouteLookup,
): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    const route =
      (reply.statusCode === 405 ? routes?.routeOf(request) : undefined) ??
      request.routeOptions.url ??
      UNMATCHED;
    metrics.httpAnswered(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}
