import proxyAddr from '@fastify/proxy-addr';
import { Logger } from '@nestjs/common';
import type { FastifyServerFactory } from 'fastify';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { REQUEST_ID_HEADER, requestIdOf } from '../logging/request-context.js';
import type { HttpAnswers, RouteAnswers } from '../metrics/http-answers.js';
import type { RateLimiter } from '../rate-limit/rate-limit.guard.js';
import { headerValueSafe, sendable, writeWire, type FastRoute, type Wire } from './fast-answers.js';
import { carriesBody } from './http-server.js';
import { askOverKeptAliveConnections } from './kept-alive-asker.js';

/** Fastify's request handler, as its `serverFactory` option receives it. */
type FastifyHandler = (request: IncomingMessage, response: ServerResponse) => void;

export interface FrontDoorOptions {
  readonly limiter: RateLimiter;
  /** Where each answer is counted, under its route's pattern, as Fastify's hooks count it. */
  readonly answers: HttpAnswers;
  /** Fastify's `trustProxy` (TRUST_PROXY): whose X-Forwarded-For names the client. */
  readonly trustProxy: boolean | readonly string[];
}

/** One route's way through the door: it answers, or hands the request on to Fastify. */
type Way = (request: IncomingMessage, response: ServerResponse, handOn: () => void) => void;

/**
 * Answers the requests whose answer is a constant (the free asset list) before Fastify sees them:
 * as Fastify's `serverFactory`, it builds the HTTP server Fastify would have built and puts itself
 * in front of Fastify's handler. Fastify's work per request (routing, its request and reply, its
 * hooks, Nest's adapter hooks) costs more than such an answer itself; here a plain request costs
 * what a bare Node server would, plus the rate limit and the metrics.
 *
 * It takes only a GET of a route's exact URL (origin form, no query) carrying no body and no
 * `Origin`, while the app is not closing, and gives it what the whole way would: the route's
 * prepared bytes, the request id, the CORS headers of an origin-less request, counted in the
 * route's rate-limit bucket (once: a refused request goes on to Fastify, whose guard answers the
 * 429 from the same verdict) and in its metrics series. Everything else goes to Fastify unchanged:
 * HEAD, other URL forms (the prepared answers' hook serves those), browsers (CORS), bodies,
 * refusals, and every request once `close()` was called. Nest middleware would not see what the
 * door answers; this app has none (see docs/architecture.md).
 */
export class FrontDoor {
  private readonly ways = new Map<string, Way>();
  private open = true;
  /** The options Fastify built its server from, for the warm-up's private twin of it. */
  private settings: ServerSettings | undefined;
  /** What the warm-up asks for: the first constant answer served. */
  private warmUpAnswer: { readonly url: string; readonly wire: Wire } | undefined;

  /**
   * Fastify's `serverFactory`: an HTTP/1.1 server set up as Fastify sets up the one it builds
   * itself (from its options, defaults filled in), with this door in front of its handler.
   */
  readonly serverFactory: FastifyServerFactory = (handler, settings) => {
    this.settings = settings;
    return serverBuiltAsFastifyWould(settings, (request, response) => {
      this.take(request, response, handler);
    });
  };

  /** Serves the constant answers of `routes` (those with one) from now on. */
  serve(routes: readonly FastRoute[], options: FrontDoorOptions): void {
    const addressOf = clientAddressOf(options.trustProxy);
    for (const route of routes) {
      if (route.constant === undefined) continue;
      if (route.paid) throw new Error(`${route.url}: a paid route has no constant answer`);
      const wire = sendable(route.constant);
      if (wire === undefined) continue; // Node would refuse it: the whole way answers
      this.warmUpAnswer ??= { url: route.url, wire };
      this.ways.set(
        route.url,
        wayThrough(wire, options.answers.route(route.url), options, addressOf),
      );
    }
  }

  /**
   * Runs Node's response path hot before the app takes traffic (HTTP_WARM_UP_REQUESTS): `requests`
   * GETs of the first constant answer, sent with Node's HTTP client over kept-alive loopback
   * connections to a private server built as the public one and answering as the door does.
   * Resolves with how many were answered within `timeoutMs` and, when it stopped short on an
   * error, which; never rejects (a warm-up that cannot run leaves the app as it was).
   *
   * Why: V8 optimizes Node's response functions (`OutgoingMessage`'s constructor, `writeHead`,
   * the emitter) from what it has seen when the first burst arrives. A process whose first burst
   * came right after a sale (whose chain calls go through Node's `ClientRequest`, an
   * `OutgoingMessage` too) answered the asset list below 0.9x bare Fastify in 12 of 15 bench
   * runs; warmed up first, it read about 1.05x (README, "What a request costs"). Node's own
   * client is used for the same reason: its requests are `OutgoingMessage`s as well.
   *
   * The private server is neither rate limited nor counted in the metrics. It listens on loopback
   * only, for as long as the warm-up takes, and serves nothing but the free asset list; called
   * from Fastify's `onReady`, it has closed before the public port opens.
   */
  async warmUp(requests: number, timeoutMs: number): Promise<WarmUpReport> {
    const [answer, settings] = [this.warmUpAnswer, this.settings];
    if (answer === undefined || settings === undefined || requests <= 0) return { answered: 0 };
    let failure: string | undefined;
    let server: Server | undefined;
    try {
      server = serverBuiltAsFastifyWould(settings, (request, response) => {
        if (!writeAnswer(request, response, answer.wire)) response.destroy();
      });
      // for its whole life: an accept error (EMFILE) is an 'error' event, fatal if unheard
      server.on('error', (error) => {
        failure ??= reasonOf(error);
      });
      const answered = await askOverKeptAliveConnections({
        port: await listeningPort(server),
        path: answer.url,
        requests,
        connections: WARM_UP_CONNECTIONS,
        timeoutMs,
      });
      return failure === undefined ? { answered } : { answered, failure };
    } catch (error) {
      return { answered: 0, failure: failure ?? reasonOf(error) };
    } finally {
      if (server !== undefined) await closed(server);
    }
  }

  /** Hands every request on to Fastify from now on: closing, it answers them as it closes. */
  close(): void {
    this.open = false;
  }

  private take(request: IncomingMessage, response: ServerResponse, handler: FastifyHandler): void {
    const way =
      this.open && request.method === 'GET' ? this.ways.get(request.url ?? '') : undefined;
    if (way === undefined || request.headers.origin !== undefined || carriesBody(request)) {
      handler(request, response);
      return;
    }
    way(request, response, () => {
      handler(request, response);
    });
  }
}

/** The way to `wire`: rate limit (when on), then the answer, counted in `counted`. */
function wayThrough(
  wire: Wire,
  counted: RouteAnswers,
  { limiter }: FrontDoorOptions,
  addressOf: (request: IncomingMessage) => string | undefined,
): Way {
  /**
   * Writes the answer and counts it; false when nothing was written (Fastify then answers). It
   * never throws: a request listener's throw would end the process. Nothing here is known to
   * throw (the id is a plain token or a UUID, the headers were checked when the wire was built).
   */
  const answered = (request: IncomingMessage, response: ServerResponse, since: number): boolean => {
    // the client left while the rate limit counted it: nothing to write or count, as on
    // Fastify's way, where the metrics hook runs only when a response finishes
    if (response.destroyed) return true;
    try {
      if (!writeAnswer(request, response, wire)) return false;
    } catch (error) {
      if (!response.headersSent) return false;
      response.destroy(error instanceof Error ? error : new Error(String(error)));
      return true;
    }
    counted.answered('GET', wire.status, (performance.now() - since) / 1000);
    return true;
  };
  if (!limiter.limited(false)) {
    return (request, response, handOn) => {
      if (!answered(request, response, performance.now())) handOn();
    };
  }
  return (request, response, handOn) => {
    const since = performance.now();
    const ip = addressIn(request, addressOf);
    if (ip === undefined) {
      handOn(); // no address to count it by: Fastify deals with it as it would
      return;
    }
    limiter.verdict({ ip, headers: request.headers, raw: request }, false).then(
      (refusal) => {
        if (refusal !== undefined || !answered(request, response, since)) handOn();
      },
      () => {
        handOn();
      },
    );
  };
}

/**
 * The door's warm-up (FrontDoor.warmUp) before the port opens, logged: how many answers in how
 * long, or a warning when fewer came back than were asked for (the app starts all the same).
 */
export async function warmUpLogged(door: FrontDoor, requests: number): Promise<void> {
  if (requests <= 0) return;
  const since = performance.now();
  const { answered, failure } = await door.warmUp(requests, WARM_UP_TIMEOUT_MS);
  const took = `${String(Math.round(performance.now() - since))} ms`;
  if (answered === requests) {
    Logger.log(`Response path warmed up: ${String(answered)} answers in ${took}`, 'FrontDoor');
  } else {
    const why = failure === undefined ? '' : ` (${failure})`;
    Logger.warn(
      `Response path warm-up cut short${why}: ${String(answered)} of ${String(requests)} answers in ${took}; starting all the same`,
      'FrontDoor',
    );
  }
}

/** The longest the warm-up may hold the port closed. */
const WARM_UP_TIMEOUT_MS = 5000;

/** Writes `wire` with the request's id; false, writing nothing, when the id cannot be sent. */
function writeAnswer(request: IncomingMessage, response: ServerResponse, wire: Wire): boolean {
  const id = requestIdOf(request);
  if (!headerValueSafe(REQUEST_ID_HEADER, id)) return false;
  writeWire(response, wire, id);
  return true;
}

/** The options Fastify hands its `serverFactory`, defaults filled in. */
type ServerSettings = Parameters<FastifyServerFactory>[1];

/**
 * An HTTP/1.1 server set up as Fastify sets up the one it builds itself from `settings`, with
 * `listener` answering its requests.
 */
function serverBuiltAsFastifyWould(
  settings: ServerSettings,
  listener: (request: IncomingMessage, response: ServerResponse) => void,
): Server {
  if (settings['http2'] === true || (settings['https'] ?? null) !== null) {
    throw new Error('the front door serves HTTP/1.1 only: TLS ends at the reverse proxy');
  }
  const server = createServer(
    (settings['http'] ?? {}) as Parameters<typeof createServer>[0],
    typeof settings['rewriteUrl'] === 'function' ? withOriginalUrl(listener) : listener,
  );
  const number = (name: string): number | undefined => {
    const value = settings[name];
    return typeof value === 'number' ? value : undefined;
  };
  server.keepAliveTimeout = number('keepAliveTimeout') ?? server.keepAliveTimeout;
  server.requestTimeout = number('requestTimeout') ?? server.requestTimeout;
  server.setTimeout(number('connectionTimeout') ?? 0);
  const perSocket = number('maxRequestsPerSocket') ?? 0;
  if (perSocket > 0) server.maxRequestsPerSocket = perSocket;
  return server;
}

/**
 * `listener`, with each request's URL first kept as `originalUrl` on Node's request, as Fastify
 * keeps it before routing when it rewrites URLs (`rewriteUrl`). Kept here, on every request, it
 * gives Node's request one shape whichever way the request goes, the door's or Fastify's. Without
 * it, the requests the door answered had one shape and those Fastify routed another: V8 optimized
 * Node's request functions (the parser's callbacks, the stream's) for the first shape, and the
 * first burst of the second (unpaid 402s after a run of asset lists) deoptimized 20-25 functions at
 * once, in the middle of a load, against 9-13 with one shape (scratch runs with `--trace-deopt`);
 * no change in CPU per answer was measured.
 */
function withOriginalUrl(
  listener: (request: IncomingMessage, response: ServerResponse) => void,
): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    (request as IncomingMessage & { originalUrl?: string }).originalUrl = request.url;
    listener(request, response);
  };
}

/** Kept-alive connections the warm-up asks over: it needs many requests, not concurrency. */
const WARM_UP_CONNECTIONS = 4;

/** How a warm-up went: the answers it got, and why it stopped short when it did. */
export interface WarmUpReport {
  readonly answered: number;
  /** The error code or message that stopped it (e.g. `EADDRNOTAVAIL`: no IPv4 loopback). */
  readonly failure?: string;
}

/** An error's code (`EADDRNOTAVAIL`), else its message; duck-typed (Node's errors cross realms under Jest). */
function reasonOf(error: unknown): string {
  const { code, message } = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    message?: unknown;
  };
  if (typeof code === 'string') return code;
  return typeof message === 'string' ? message : String(error);
}

/** Listens on a free loopback port; resolves with it. */
function listeningPort(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      const address = server.address();
      if (address === null || typeof address === 'string') reject(new Error('no port'));
      else resolve(address.port);
    });
  });
}

/**
 * Closes `server` and its connections; resolves when it closed, or after CLOSE_WAIT_MS at the
 * latest (the warm-up runs in Fastify's `onReady`, whose hooks time out after 10 s).
 */
function closed(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => {
    setTimeout(resolve, CLOSE_WAIT_MS).unref();
    server.close(() => {
      resolve();
    });
  });
}

const CLOSE_WAIT_MS = 1000;

/** `addressOf(request)`, or undefined when there is none or it cannot be worked out. */
function addressIn(
  request: IncomingMessage,
  addressOf: (request: IncomingMessage) => string | undefined,
): string | undefined {
  try {
    return addressOf(request);
  } catch {
    return undefined;
  }
}

/**
 * The client address Fastify's `request.ip` gives with this `trustProxy`: the connection's, or,
 * behind trusted proxies, the X-Forwarded-For entry the last trusted hop names.
 */
export function clientAddressOf(
  trustProxy: boolean | readonly string[],
): (request: IncomingMessage) => string | undefined {
  if (trustProxy === false) return (request) => request.socket.remoteAddress;
  const trusted = trustProxy === true ? (): boolean => true : proxyAddr.compile([...trustProxy]);
  return (request) => {
    if (request.socket.remoteAddress === undefined) return undefined;
    return proxyAddr.all(request, trusted).at(-1);
  };
}
