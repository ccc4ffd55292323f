import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { validateHeaderName, validateHeaderValue, type ServerResponse } from 'node:http';
import { inRequestContext, REQUEST_ID_HEADER } from '../logging/request-context.js';
import type { RateLimiter } from '../rate-limit/rate-limit.guard.js';
import { CORS_HEADERS_WITHOUT_ORIGIN } from './cors.js';
import { carriesBody } from './http-server.js';

/** A complete answer, status, headers and body, sent as it is. */
export interface PreparedAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * A GET route whose usual answers are known before Nest's pipeline runs. `answer` gives the
 * exact answer Nest's pipeline would give this request (guards, handler or exception filter),
 * or undefined when it is not sure: then the request goes through Nest as always.
 */
export interface FastRoute {
  /** The Fastify route pattern, as Nest registers it (`/v1/ticker/:symbol`). */
  readonly url: string;
  /** Counted in the rate limit's `unpaid` bucket rather than `free` (see RateLimitGuard). */
  readonly paid: boolean;
  answer(request: FastifyRequest): PreparedAnswer | undefined | Promise<PreparedAnswer | undefined>;
  /**
   * The answer every request `answer` takes gets, whatever it carries (the asset list): the
   * front door (common/front-door.ts) then gives it to a plain GET of the route's exact URL
   * before Fastify routes it.
   */
  readonly constant?: PreparedAnswer;
}

export interface FastAnswersOptions {
  readonly limiter: RateLimiter;
  readonly routes: readonly FastRoute[];
  /** JSON logs: whatever a prepared answer logs names its request (see installRequestContext). */
  readonly logged: boolean;
}

/**
 * Answers the hot requests of `routes` with prepared bytes from one `onRequest` hook, added
 * before the app's own request hooks (CORS, request id, body refusal; after Nest's adapter hooks
 * and middleware): the same status, headers and body the whole way would send, at a fraction of
 * the CPU. It takes a GET of one of `routes` that carries no body and no `Origin` (programs and
 * agents; a browser's request goes the whole way, through the CORS plugin) and adds itself what
 * those hooks would have: the request id and the CORS headers of an origin-less request.
 * Everything the pipeline does around an answer still happens: the rate limit counts the request
 * in the same bucket (once: a request handed on is not counted again), and the metrics hooks see
 * it like any other answer. Whatever is not a plain success of the route's `answer` (a 429, an
 * error, a payment, an answer Node would refuse) goes on unchanged.
 * `test/prepared-answers.e2e-spec.ts` compares both ways: status, header values and body.
 *
 * Call before the CORS plugin and the other request hooks are added.
 */
export function installFastAnswers(fastify: FastifyInstance, options: FastAnswersOptions): void {
  const byUrl = new Map(
    options.routes.map((route) => [route.url, preparedFor(route, options)] as const),
  );
  fastify.addHook('onRequest', function fastAnswer(request, reply, done) {
    const prepared =
      request.method === 'GET' && request.headers.origin === undefined && !carriesBody(request)
        ? byUrl.get(request.routeOptions.url ?? '')
        : undefined;
    if (prepared === undefined) done();
    else prepared(request, reply, done);
  });
}

type PreparedWay = (request: FastifyRequest, reply: FastifyReply, done: () => void) => void;

/** The prepared way through `route`: rate limit, then its answer, or on to the pipeline. */
function preparedFor(route: FastRoute, options: FastAnswersOptions): PreparedWay {
  const { limiter, logged } = options;
  const limited = limiter.limited(route.paid);
  return function preparedAnswer(request, reply, done) {
    const answer = (): void => {
      inRequestContext(request, logged, () => {
        answerWith(route, request, reply, done);
      });
    };
    if (!limited) {
      answer();
      return;
    }
    limiter.verdict(request, route.paid).then(
      (refusal) => {
        if (refusal === undefined) answer();
        else done(); // the guard answers the 429 from the same verdict
      },
      () => {
        done();
      },
    );
  };
}

function answerWith(
  route: FastRoute,
  request: FastifyRequest,
  reply: FastifyReply,
  done: () => void,
): void {
  let prepared;
  try {
    prepared = route.answer(request);
  } catch {
    done();
    return;
  }
  if (prepared instanceof Promise) {
    prepared.then(
      (settled) => {
        send(request, reply, settled, done);
      },
      () => {
        done();
      },
    );
  } else {
    send(request, reply, prepared, done);
  }
}

function send(
  request: FastifyRequest,
  reply: FastifyReply,
  prepared: PreparedAnswer | undefined,
  done: () => void,
): void {
  const wire = prepared === undefined ? undefined : sendable(prepared);
  if (wire === undefined || !headerValueSafe(REQUEST_ID_HEADER, request.id)) {
    done(); // the whole way answers it, errors included
    return;
  }
  // Written to Node's response directly: Fastify's reply would only copy these headers into an
  // object of its own, measure the body again and run onSend hooks this app has none of. Its
  // onResponse hooks (the metrics) still run when the response finishes.
  reply.hijack();
  writeWire(reply.raw, wire, request.id);
}

/**
 * Writes `wire` with `requestId` as the response's whole answer. Nothing here can throw: the
 * status and every header were checked when the wire was built, and the caller checked the id
 * (`headerValueSafe`) before taking the response over.
 */
export function writeWire(response: ServerResponse, wire: Wire, requestId: string): void {
  const headers = wire.headers.slice();
  if (wire.requestIdAt >= 0) headers[wire.requestIdAt] = requestId;
  response.writeHead(wire.status, headers);
  response.end(wire.body);
}

/** A prepared answer as Node writes it, built once per answer. */
export interface Wire {
  readonly status: number;
  /** Names and values in turn, as `writeHead` takes them; the request id's value left empty. */
  readonly headers: readonly string[];
  /** Where the request id goes; -1 when the answer carries its own, which wins, as in Fastify. */
  readonly requestIdAt: number;
  readonly body: Buffer;
}

const wires = new WeakMap<PreparedAnswer, Wire | undefined>();

/** `prepared` as Node writes it, or undefined when Node would refuse its status or a header. */
export function sendable(prepared: PreparedAnswer): Wire | undefined {
  let wire = wires.get(prepared);
  if (wire === undefined && !wires.has(prepared)) {
    wire = wireOf(prepared);
    wires.set(prepared, wire);
  }
  return wire;
}

/**
 * The headers Fastify's reply would send: the CORS headers of an origin-less request, the request
 * id, the answer's own (names lower-cased, a later one replacing an earlier one in its place), and
 * the body's length. Undefined when Fastify or Node would refuse the status or a header.
 */
function wireOf(prepared: PreparedAnswer): Wire | undefined {
  const own = lowerCased(prepared.headers);
  const body = Buffer.from(prepared.body);
  const named: Record<string, string> = {
    ...CORS_HEADERS_WITHOUT_ORIGIN,
    [REQUEST_ID_HEADER]: '',
    ...own,
    'content-length': String(body.length),
  };
  const names = Object.keys(named);
  const valid =
    Number.isInteger(prepared.status) &&
    prepared.status >= 100 &&
    prepared.status <= 599 &&
    names.every((name) => headerNameSafe(name) && headerValueSafe(name, named[name] ?? ''));
  if (!valid) return undefined;
  return {
    status: prepared.status,
    headers: Object.entries(named).flat(),
    requestIdAt: REQUEST_ID_HEADER in own ? -1 : names.indexOf(REQUEST_ID_HEADER) * 2 + 1,
    body,
  };
}

function lowerCased(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]),
  );
}

function headerNameSafe(name: string): boolean {
  try {
    validateHeaderName(name);
    return true;
  } catch {
    return false;
  }
}

export function headerValueSafe(name: string, value: string): boolean {
  try {
    validateHeaderValue(name, value);
    return true;
  } catch {
    return false;
  }
}
