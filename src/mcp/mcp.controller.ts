import { Controller, Post, Req, Res } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiExcludeEndpoint } from '@nestjs/swagger';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { JSON_RPC_ROUTE } from '../common/problem-details.filter.js';
import { RateLimiter } from '../rate-limit/rate-limit.guard.js';
import { SkipRateLimit } from '../rate-limit/skip-rate-limit.decorator.js';
import { checkBatch, refusal, type CheckedBatch } from './json-rpc-batch.js';
import { McpExchanges } from './mcp-exchanges.js';
import { McpToolServer } from './mcp-tool-server.js';

/** What the MCP transport asks of a client's Accept; this server answers JSON only. */
const TRANSPORT_ACCEPT = 'application/json, text/event-stream';
/** JSON-RPC's code for a request that ran out of time (the MCP SDK's RequestTimeout). */
const REQUEST_TIMEOUT = -32001;
/** How long past its deadline an exchange may take to wind its calls down. */
const WIND_DOWN_MS = 2_000;

/**
 * `POST /mcp`: the Model Context Protocol over Streamable HTTP, stateless (every call stands
 * alone; JSON answers, no SSE stream), through the same Nest pipeline as every route (problem
 * details, access line, metrics); a body that is no JSON is JSON-RPC's parse error (-32700).
 * Each message counts as the request it stands for: a tool call is its route's own request (its
 * rate-limit bucket, paywall and answer), any other request one free request, and a POST that
 * runs no tool call at least one. Exchanges are bounded per client and in all (McpExchanges);
 * at its deadline an exchange's calls are cancelled but those already settling, which answer
 * with their settlement: every call of a batch gets its own answer. Other methods on /mcp
 * answer 405.
 */
@Controller('mcp')
export class McpController {
  constructor(
    private readonly tools: McpToolServer,
    private readonly exchanges: McpExchanges,
    private readonly limiter: RateLimiter,
  ) {}

  @Post()
  @RouteConfig(JSON_RPC_ROUTE)
  @SkipRateLimit()
  @ApiExcludeEndpoint()
  async post(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    const checked = checkBatch(request.body);
    for (let count = freeRequestsIn(checked); count > 0; count -= 1) {
      const refused = await this.limiter.verdict(request, false, reply);
      if (refused !== undefined) throw refused;
    }
    if (checked.kind === 'refused') {
      void reply.status(400).header('content-type', 'application/json');
      return JSON.stringify(checked.refusal);
    }
    const exchange = this.exchanges.enter(request.ip);
    try {
      const answer = await this.exchange(request, checked.body, exchange.signal);
      void reply.status(answer.status);
      answer.headers.forEach((value, name) => {
        void reply.header(name, value);
      });
      return await answer.text();
    } finally {
      exchange.leave();
    }
  }

  private async exchange(
    request: FastifyRequest,
    body: unknown,
    deadline: AbortSignal,
  ): Promise<Response> {
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    const settling: Promise<unknown>[] = [];
    const server = this.tools.serverFor({
      ip: request.ip,
      userAgent: request.headers['user-agent'],
      signal: deadline,
      waitFor: (outcome) => settling.push(outcome),
    });
    await server.connect(transport);
    let windDown: NodeJS.Timeout | undefined;
    let ended = false;
    try {
      const handled = transport.handleRequest(
        new Request('http://mcp.local/mcp', { method: 'POST', headers: transportHeaders(request) }),
        { parsedBody: body },
      );
      // At the deadline a call not yet settling answers its cancellation at once; one whose
      // settlement is in flight answers when it ends (bounded by the settlement's own deadline).
      // An exchange still unanswered WIND_DOWN_MS after both is answered 504.
      const late = new Promise<Response>((resolve) => {
        const timedOut = () => {
          if (ended) return;
          windDown = setTimeout(() => {
            resolve(
              Response.json(refusal(REQUEST_TIMEOUT, 'The exchange ran past its deadline.'), {
                status: 504,
              }),
            );
          }, WIND_DOWN_MS);
        };
        deadline.addEventListener(
          'abort',
          () => {
            // the calls learn of the deadline after this listener: what they hold is read later
            windDown = setTimeout(() => {
              if (settling.length === 0) timedOut();
              else void Promise.allSettled(settling).then(timedOut);
            }, 0);
          },
          { once: true },
        );
      });
      return await Promise.race([handled, late]);
    } finally {
      ended = true;
      clearTimeout(windDown);
      await server.close();
    }
  }
}

/**
 * The free requests a POST counts as: each request but a tool call (which counts as its route's
 * own request), and at least one for a POST that runs no tool call (notifications, a refusal).
 */
function freeRequestsIn(checked: CheckedBatch): number {
  if (checked.kind === 'refused') return 1;
  const others = checked.methods.filter((method) => method !== 'tools/call').length;
  return checked.methods.length > others ? others : Math.max(1, others);
}

/**
 * The headers the MCP transport reads. A client that accepts JSON (or sends no Accept: curl) is
 * served, as every answer here is JSON; only one that refuses JSON gets the transport's 406.
 */
function transportHeaders(request: FastifyRequest): Headers {
  const headers = new Headers();
  for (const name of ['content-type', 'mcp-protocol-version'] as const) {
    const value = request.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  const accept = request.headers.accept;
  headers.set('accept', acceptsJson(accept) ? TRANSPORT_ACCEPT : (accept ?? ''));
  return headers;
}

function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept
    .split(',')
    .map((range) => range.split(';')[0]?.trim().toLowerCase())
    .some((type) => type === 'application/json' || type === 'application/*' || type === '*/*');
}
