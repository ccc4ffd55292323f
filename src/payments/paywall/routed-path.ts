import type { FastifyRequest } from 'fastify';

/** A route parameter (`:symbol`) or the wildcard (`*`) in a Fastify route pattern. */
const ROUTE_PARAMETER = /:([A-Za-z0-9_]+)|\*/g;

/**
 * The path of the route a request matched, each parameter as the router decoded it and escaped
 * only where a path segment needs it: `/v1/ticker/%42TC` is `/v1/ticker/BTC`. What a receipt,
 * a 402 and a payment binding name, never the raw target the buyer chose.
 */
export function routedPath(request: FastifyRequest): string {
  const pattern = request.routeOptions.url;
  if (pattern === undefined) return request.url.split('?')[0] ?? '/';
  const params = (request.params ?? {}) as Record<string, unknown>;
  return pattern.replace(ROUTE_PARAMETER, (match, name: string | undefined) => {
    const value = params[name ?? '*'];
    if (typeof value !== 'string') return match;
    // the wildcard's slashes separate segments of the route
    return name === undefined ? value.split('/').map(pathSegment).join('/') : pathSegment(value);
  });
}

/** `value` as one path segment (RFC 3986 pchar): escaped where it must be, and nowhere else. */
function pathSegment(value: string): string {
  return encodeURIComponent(value).replace(/%(24|26|2B|2C|3A|3B|3D|40)/gi, (_match, hex: string) =>
    String.fromCharCode(parseInt(hex, 16)),
  );
}

/** The query of a request target, with its `?`, or nothing. */
export function queryOf(request: FastifyRequest): string {
  const start = request.url.indexOf('?');
  return start === -1 ? '' : request.url.slice(start);
}
