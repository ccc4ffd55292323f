import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Methods a route here can answer; OPTIONS is left out: the CORS plugin answers it on every path. */
const ROUTED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * Which methods a path answers, for the 405 of a known path asked with another method. GET
 * routes have implicit HEAD twins, except the `getOnly` ones (paid routes: a HEAD cannot carry
 * a paid body), whose HEAD is refused with 405 like any other method they do not answer.
 */
export class MethodTable {
  private readonly getOnly: readonly RegExp[];

  /** `getOnlyPaths`: route paths in Nest form (`/v1/ticker/:symbol`). */
  constructor(private readonly getOnlyPaths: readonly string[]) {
    this.getOnly = getOnlyPaths.map(routePattern);
  }

  /** Must run before the routes are registered: the HEAD twin of a GET-only route refuses. */
  install(instance: FastifyInstance): void {
    instance.addHook('onRoute', (route) => {
      if (route.method === 'HEAD' && this.getOnlyPaths.includes(route.url)) {
        route.handler = refuseHead;
      }
    });
  }

  /** The methods the request's path answers; empty when no route has that path. */
  allowed(request: FastifyRequest): string[] {
    const path = request.url.split('?')[0] ?? '';
    const methods: string[] = ROUTED_METHODS.filter((method) =>
      Boolean(request.server.findRoute({ method, url: path })),
    );
    return this.getOnly.some((pattern) => pattern.test(path))
      ? methods.filter((method) => method !== 'HEAD')
      : methods;
  }
}

/** Hands the request to the not-found path, where the exception filter answers 405. */
function refuseHead(_request: FastifyRequest, reply: FastifyReply): void {
  reply.callNotFound();
}

/** `/v1/ticker/:symbol` → a RegExp matching the concrete paths of that route. */
function routePattern(path: string): RegExp {
  const segments = path
    .split('/')
    .map((segment) =>
      segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    );
  return new RegExp(`^${segments.join('/')}$`);
}
