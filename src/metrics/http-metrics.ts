import type { FastifyInstance } from 'fastify';
import type { MetricsService } from './metrics.service.js';

/** Requests that matched no route share one label, so probing random paths cannot add series. */
const UNMATCHED = 'unmatched';

/**
 * Counts every answer by method, route pattern and status, with its duration. A plugin's routes
 * get the hooks its instance had when it was registered: call before any plugin is registered,
 * so that every route is counted.
 */
export function installHttpMetrics(fastify: FastifyInstance, metrics: MetricsService): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED;
    metrics.httpAnswered(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}
