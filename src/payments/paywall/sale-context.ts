import type { FastifyReply, FastifyRequest } from 'fastify';
import { routeOf, type RequestWithPayment } from './payment-errors.js';
import { queryOf, routedPath } from './routed-path.js';
import type { SaleContext } from './seller-scheme.js';

/**
 * The HTTP side of a SaleContext: built from the request and reply a paid call arrived on, and
 * read back only by the paywall's own services (verification, the 402), never by a scheme.
 */

const transports = new WeakMap<SaleContext, { request: FastifyRequest; reply: FastifyReply }>();
/** One departure signal per response, however many sales it carries (an MCP batch's calls). */
const departures = new WeakMap<FastifyReply['raw'], AbortSignal>();

/** The sale context of a paid call; its signal aborts when the buyer's connection closes first. */
export function saleContextOf(request: FastifyRequest, reply: FastifyReply): SaleContext {
  const context: SaleContext = {
    route: routeOf(request),
    resource: resourceOf(request),
    label: `${request.method} ${routedPath(request)}`,
    signal: departureOf(reply),
  };
  transports.set(context, { request, reply });
  return context;
}

/** The request a sale context was built from (the paywall's side of the seam only). */
export function requestOf(context: SaleContext): FastifyRequest {
  const transport = transports.get(context);
  if (transport === undefined) throw new Error(`${context.label}: not a paywall's sale context`);
  return transport.request;
}

/** Aborts when the response's connection closes before the response was written in full. */
function departureOf(reply: FastifyReply): AbortSignal {
  const response = reply.raw;
  let signal = departures.get(response);
  if (signal === undefined) {
    const controller = new AbortController();
    if (clientGone(reply)) {
      controller.abort();
    } else {
      response.once('close', () => {
        if (!response.writableFinished) controller.abort();
      });
    }
    signal = controller.signal;
    departures.set(response, signal);
  }
  return signal;
}

/** The connection the answer would go out on is gone: nobody would receive what is sold. */
export function clientGone(reply: FastifyReply): boolean {
  const response = reply.raw;
  return response.destroyed || response.socket === null || response.socket.destroyed;
}

/** What a payment-identifier used on `request` is bound to: its route and URL, or its tool call. */
export function resourceOf(request: FastifyRequest): string {
  return (
    (request as RequestWithPayment).x402Call?.resource ??
    `${request.method} ${routedPath(request)}${queryOf(request)}`
  );
}
