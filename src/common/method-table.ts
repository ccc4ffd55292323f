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
  /** Every routed path pattern (`/v1/ticker/:symbol`), with a RegExp for its concrete paths. */
  private readonly routes: { readonly url: string; readonly pattern: RegExp }[] = [];

  /** `getOnlyPaths`: route paths in Nest form (`/v1/ticker/:symbol`). */
  constructor(private readonly getOnlyPaths: readonly string[]) {
    this.getOnly = getOnlyPaths.map(routePattern);
  }

  /**
   * Must run before the routes are registered: the HEAD twin of a GET-only route refuses, and
   * every route's pattern is recorded for routeOf().
   */
  install(instance: FastifyInstance): void {
    instance.addHook('onRoute', (route) => {
      if (route.method === 'HEAD' && this.getOnlyPaths.includes(route.url)) {
        route.handler = refuseHead;
      }
      const routed = [route.method].flat().some((method) => isRouted(method));
      if (routed && !this.routes.some((known) => known.url === route.url)) {
        this.routes.push({ url: route.url, pattern: routePattern(route.url) });
      }
    });
  }

  /**
   * The route pattern of the request's path (`/v1/ticker/:symbol`), whatever its method: where a
   * 405 belongs. A static route wins over a parametric one, as in the router.
   */
  routeOf(request: FastifyRequest): string | undefined {
    const path = request.url.split('?')[0] ?? '';
    const matching = this.routes.filter((route) => route.pattern.test(path));
    matching.sort((a, b) => looseness(a.url) - looseness(b.url));
    return matching[0]?.url;
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

function isRouted(method: string): boolean {
  return (ROUTED_METHODS as readonly string[]).includes(method.toUpperCase());
}

/** How loosely a route pattern matches: static segments first, then parameters, then wildcards. */
function looseness(url: string): number {
  return url
    .split('/')
    .reduce((sum, segment) => sum + (segment === '*' ? 1000 : segment.startsWith(':') ? 1 : 0), 0);
}

/** Hands the request to the not-found path, where the exception filter answers 405. */
function refuseHead(_request: FastifyRequest, reply: FastifyReply): void {
  reply.callNotFound();
}

/** `/v1/ticker/:symbol` → a RegExp matching the concrete paths of that route. */
function routePattern(path: string): RegExp {
  const segments = path.split('/').map((segment) => {
    if (segment.startsWith(':')) return '[^/]+';
    // a wildcard (`/docs/*`) takes the rest of the path
    if (segment === '*') return '.*';
    return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp(`^${segments.join('/')}$`);
}
