/**
 * The request id: the caller's `X-Request-Id` when it is a plain token, else a new UUID. Fastify
 * makes it each request's `id`; every answer returns it and every log line of the request names it.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const REQUEST_ID_HEADER = 'x-request-id';

/** An incoming id is kept only if it is short and plain: it ends up in every log line. */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify's `genReqId`: the caller's `X-Request-Id` when it is a plain token, else a new UUID. */
export function requestIdOf(request: IncomingMessage): string {
  const presented = request.headers[REQUEST_ID_HEADER];
  const id = Array.isArray(presented) ? presented[0] : presented;
  return id !== undefined && ACCEPTED_REQUEST_ID.test(id) ? id : randomUUID();
}
