import type { IncomingHttpHeaders, IncomingMessage, ServerOptions } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpSettings } from './server.settings.js';
import { ErrorCode } from './api-error.js';
import { PROBLEM_CONTENT_TYPE, problem } from './problem-details.js';

/** Headers must arrive sooner than the whole request, and never take longer than this. */
const MAX_HEADERS_TIMEOUT_MS = 10_000;

/**
 * Socket limits for the Fastify server. A request must arrive whole (headers and body) within
 * `requestTimeoutMs`; Node checks pending requests often enough that a trickling client is cut
 * off close to that limit, not up to 30 s later. No inactivity time-out on the socket: a paid
 * request legitimately waits for verification and settlement with nothing on the wire.
 */
export function httpServerOptions(config: HttpSettings): {
  requestTimeout: number;
  keepAliveTimeout: number;
  http: ServerOptions;
} {
  const http: ServerOptions = {
    requestTimeout: config.requestTimeoutMs,
    headersTimeout: Math.min(config.requestTimeoutMs, MAX_HEADERS_TIMEOUT_MS),
    keepAliveTimeout: config.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(250, Math.floor(config.requestTimeoutMs / 10)),
  };
  return {
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    http,
  };
}

/**
 * The origin form (`/path?query`) of a request target. A client may send the absolute form
 * (`GET http://host/v1/ticker/BTC`, RFC 9112 §3.2.2); everything after routing sees one shape.
 */
export function originForm(request: IncomingMessage): string {
  const target = request.url ?? '/';
  if (target.startsWith('/') || target === '*') return target;
  try {
    const url = new URL(target);
    return `${url.pathname}${url.search}`;
  } catch {
    return target;
  }
}

/** Every route here is a GET: a request that carries a body is refused before it is read. */
export function refuseRequestBodies(
  request: FastifyRequest,
  reply: FastifyReply,
  done: () => void,
): void {
  if (!carriesBody(request)) {
    done();
    return;
  }
  void reply
    .status(400)
    .header('content-type', PROBLEM_CONTENT_TYPE)
    // the unread body cannot be skipped safely: the connection ends with this answer
    .header('connection', 'close')
    .send(
      problem(
        400,
        ErrorCode.BadRequest,
        `A ${request.method} request carries no body.`,
        request.url.split('?')[0],
      ),
    );
}

/**
 * A request target carrying a fragment (`#`) is refused (400) before routing decides anything:
 * RFC 9112's request-target has none, and a paid answer's receipt, 402 and payment binding must
 * name one URL per route, never one the buyer decorated.
 */
export function refuseFragments(
  request: FastifyRequest,
  reply: FastifyReply,
  done: () => void,
): void {
  if (!request.originalUrl.includes('#')) {
    done();
    return;
  }
  void reply
    .status(400)
    .header('content-type', PROBLEM_CONTENT_TYPE)
    .send(
      problem(
        400,
        ErrorCode.BadRequest,
        'A request target carries no fragment (#); send the path and query alone.',
        request.url.split(/[?#]/)[0],
      ),
    );
}

/** A GET or HEAD that announces a body (refused by refuseRequestBodies); Fastify's or Node's request. */
export function carriesBody(request: {
  readonly method?: string | undefined;
  readonly headers: IncomingHttpHeaders;
}): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const length = request.headers['content-length'];
  return (
    request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
  );
}
