import type { FastifyInstance } from 'fastify';
import type { MetricsService } from './metrics.service.js';

/** Requests that matched no route share one label, so probing random paths cannot add series. */
const UNMATCHED = 'unmatched';

/** Counts every answer by method, route pattern and status, with its duration. */
export function installHttpMetrics(fastify: FastifyInstance, metrics: MetricsService): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    metrics.httpAnswered(
      request.method,
      request.routeOptions.url ?? UNMATCHED,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });
}
