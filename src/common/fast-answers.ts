import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { RateLimiter } from '../rate-limit/rate-limit.guard.js';

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
}

/**
 * Answers the hot requests of `routes` with prepared bytes from an `onRequest` hook of their
 * own route, after the app's global hooks (request id, body refusal, CORS) ran: the same
 * status, headers and body Nest would send, at a fraction of the CPU (Nest's router, guards
 * and exception filter cost a free request about twice what Fastify does). Everything the
 * pipeline does around an answer still happens: the rate limit counts the request in the same
 * bucket (once: a request handed on is not counted again), and the metrics hooks see it like
 * any other answer. Whatever is not a plain success of the route's `answer` (a 429, an error,
 * a payment) goes through Nest unchanged.
 *
 * Call before the routes are registered (before `init`/`listen`).
 */
export function installFastAnswers(
  fastify: FastifyInstance,
  limiter: RateLimiter,
  routes: readonly FastRoute[],
): void {
  const byUrl = new Map(routes.map((route) => [route.url, route]));
  fastify.addHook('onRoute', (options) => {
    const route = options.method === 'GET' ? byUrl.get(options.url) : undefined;
    if (route === undefined) return;
    const hooks = options.onRequest;
    const fast = fastHook(limiter, route);
    options.onRequest = hooks === undefined ? [fast] : [...[hooks].flat(), fast];
  });
}

function fastHook(limiter: RateLimiter, route: FastRoute): onRequestHookHandler {
  const limited = limiter.limited(route.paid);
  return function fastAnswer(request, reply, done) {
    const answer = (): void => {
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
            send(reply, settled, done);
          },
          () => {
            done();
          },
        );
      } else {
        send(reply, prepared, done);
      }
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

function send(reply: FastifyReply, prepared: PreparedAnswer | undefined, done: () => void): void {
  if (prepared === undefined) {
    done();
    return;
  }
  void reply.status(prepared.status).headers(prepared.headers).send(prepared.body);
}
