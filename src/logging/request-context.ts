import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

export const REQUEST_ID_HEADER = 'x-request-id';

/** An incoming id is kept only if it is short and plain: it ends up in every log line. */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request a log line is written for, if any. */
export const requestContext = new AsyncLocalStorage<{ readonly requestId: string }>();

/** Fastify's `genReqId`: the caller's `X-Request-Id` when it is a plain token, else a new UUID. */
export function requestIdOf(request: IncomingMessage): string {
  const presented = request.headers[REQUEST_ID_HEADER];
  const id = Array.isArray(presented) ? presented[0] : presented;
  return id !== undefined && ACCEPTED_REQUEST_ID.test(id) ? id : randomUUID();
}

/**
 * Every answer carries its request id. With `logged`, everything logged while serving it names it
 * too: that takes an AsyncLocalStorage, whose promise hooks cost every request a few µs of CPU on
 * Node 20, so only JSON logs (which print the id) pay for it.
 */
export function installRequestContext(fastify: FastifyInstance, logged: boolean): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    if (logged) requestContext.run({ requestId: request.id }, done);
    else done();
  });
}

/** The id of the request being served, for log lines. */
export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}
