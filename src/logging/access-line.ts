import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { REQUEST_ID_HEADER } from './request-id.js';

/** The matched route's pattern, kept on the raw request for its access line. */
const ROUTE = Symbol('route');

/**
 * The raw request pino-http sees: @fastify/middie copies Fastify's `id` and `ip` (the client
 * address, TRUST_PROXY applied) onto it; the route is ours.
 */
type ServedRequest = IncomingMessage & { ip?: string; [ROUTE]?: string };

/** One request's access line, beside the `requestId` every line of the request carries. */
export interface AccessFields {
  readonly method: string | undefined;
  /** The route's pattern (`/v1/ticker/:symbol`); none for a path no route matched. */
  readonly route: string | undefined;
  readonly status: number;
  readonly durationMs: number;
  readonly client: string | undefined;
}

/** Every answer carries its request id, and its access line names the route that served it. */
export function installRequestLogging(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    (request.raw as ServedRequest)[ROUTE] = request.routeOptions.url;
    done();
  });
}

/** pino-http's `customSuccessObject`/`customErrorObject`: the access line's fields, no headers. */
export function accessFields(
  request: IncomingMessage,
  response: ServerResponse,
  durationMs: number,
): AccessFields {
  const served = request as ServedRequest;
  return {
    method: served.method,
    route: served[ROUTE],
    status: response.statusCode,
    durationMs,
    client: served.ip,
  };
}
