import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** `Cache-Control` by route pattern, for routes whose handlers the app does not write (Swagger's). */
export type CachePolicies = Readonly<Record<string, string>>;

/** The last body a route answered and its entity tag: a constant route hashes its body once. */
interface TaggedBody {
  readonly body: string | Buffer;
  readonly etag: string;
}

/**
 * HTTP caching for answers that are the same for every client. `policies` gives routes a
 * `Cache-Control`; a route of the app declares its own (`@Header('cache-control', ...)`).
 * Every 200 to a GET or HEAD whose `Cache-Control` is `public` gets a strong `ETag` and is
 * answered 304 when `If-None-Match` names it, so a CDN or a reverse proxy can keep and
 * revalidate it. Static files (a stream) carry their own validators from the static plugin.
 */
export function installHttpCaching(fastify: FastifyInstance, policies: CachePolicies): void {
  const tagged = new Map<string, TaggedBody>();
  fastify.addHook('onSend', (request, reply, payload, done) => {
    const route = request.routeOptions.url;
    const policy = route === undefined ? undefined : policies[route];
    if (policy !== undefined && reply.statusCode === 200)
      void reply.header('cache-control', policy);
    if (!cacheable(request, reply) || !(typeof payload === 'string' || Buffer.isBuffer(payload))) {
      done(null, payload);
      return;
    }
    const key = route ?? request.url;
    let entry = tagged.get(key);
    if (entry === undefined || !sameBody(entry.body, payload)) {
      entry = { body: payload, etag: entityTag(payload) };
      tagged.set(key, entry);
    }
    void reply.header('etag', entry.etag);
    if (!matches(request.headers['if-none-match'], entry.etag)) {
      done(null, payload);
      return;
    }
    void reply.code(304);
    reply.removeHeader('content-type');
    reply.removeHeader('content-length');
    done(null, '');
  });
}

function cacheable(request: FastifyRequest, reply: FastifyReply): boolean {
  if (reply.statusCode !== 200 || (request.method !== 'GET' && request.method !== 'HEAD')) {
    return false;
  }
  const policy = reply.getHeader('cache-control');
  return typeof policy === 'string' && /(^|,)\s*public\b/.test(policy);
}

function sameBody(cached: string | Buffer, payload: string | Buffer): boolean {
  if (typeof cached === 'string' || typeof payload === 'string') return cached === payload;
  return cached.equals(payload);
}

/** A strong tag from the body's digest: the same bytes give the same tag on every instance. */
export function entityTag(body: string | Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/** `If-None-Match` (RFC 9110 §13.1.2): `*`, or a list of tags compared weakly. */
export function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === opaque);
}
