/**
 * Logging on Fastify's own hooks, for every request: `onRequest` returns the request id
 * (`X-Request-Id`) and opens the request's log store; `onResponse` writes its one access line.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { MethodTable } from '../common/method-table.js';
import type { AppPino } from './log-output.js';
import { REQUEST_ID_HEADER } from './request-id.js';
import { runWithRequestLog, type RequestLog } from './request-log.js';

/** Where a 405 belongs: the route its path has, for other methods. */
export type RouteLookup = Pick<MethodTable, 'routeOf'>;

/** The route of a request no route matched. */
const UNMATCHED = 'unmatched';

/** The request's log store, kept on the request for its access line. */
const REQUEST_LOG = Symbol('requestLog');

type LoggedRequest = FastifyRequest & { [REQUEST_LOG]: RequestLog | null };

/** The access line's message, in both formats. */
export const ACCESS_MESSAGE = 'request completed';

/**
 * Installs the request id and log store (`onRequest`) and the access line (`onResponse`). A route
 * gets the hooks its instance had when it was added: call before any plugin is registered.
 */
export function installAccessLog(
  fastify: FastifyInstance,
  access: AppPino,
  routes?: RouteLookup,
): void {
  fastify.decorateRequest(REQUEST_LOG, null);
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    const log: RequestLog = { requestId: request.id, sale: undefined };
    (request as LoggedRequest)[REQUEST_LOG] = log;
    runWithRequestLog(log, done);
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const level = reply.statusCode >= 500 ? 'warn' : 'log';
    if (access.isLevelEnabled(level)) {
      access[level](accessFields(request, reply, routes), ACCESS_MESSAGE);
    }
    done();
  });
}

/** The access line's fields: the request, its answer, and a sale's payer, amount and network. */
export function accessFields(
  request: FastifyRequest,
  reply: FastifyReply,
  routes?: RouteLookup,
): Record<string, unknown> {
  const sale = (request as LoggedRequest)[REQUEST_LOG]?.sale;
  return {
    requestId: request.id,
    method: request.method,
    route:
      (reply.statusCode === 405 ? routes?.routeOf(request) : undefined) ??
      request.routeOptions.url ??
      UNMATCHED,
    status: reply.statusCode,
    durationMs: Math.round(reply.elapsedTime * 100) / 100,
    client: request.ip,
    ...sale,
  };
}
