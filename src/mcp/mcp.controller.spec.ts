import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimiter } from '../rate-limit/rate-limit.guard.js';
import { McpController } from './mcp.controller.js';
import { McpExchanges } from './mcp-exchanges.js';
import { McpToolServer } from './mcp-tool-server.js';
import type { RouteTool, RouteTools } from './route-tools.js';
import type { ToolCall, ToolCalls } from './tool-calls.js';
import { answered } from './tool-results.js';

const SETTLEMENT = {
  success: true,
  transaction: `0x${'ab'.repeat(32)}`,
  network: 'eip155:84532' as const,
};

const TOOL: RouteTool = {
  name: 'get_ticker',
  description: 'A price',
  inputSchema: { type: 'object', properties: {} },
  price: '$0.002',
  path: '/v1/ticker/:symbol',
  arguments: [],
};

/** A controller whose one tool answers as `call` does, exchanges ending after `deadlineMs`. */
function controllerWith(
  call: (tool: RouteTool, call: ToolCall) => Promise<unknown>,
  deadlineMs: number,
) {
  const tools = { all: () => [TOOL], named: () => TOOL } as unknown as RouteTools;
  const calls = { call } as unknown as ToolCalls;
  const limiter = { verdict: () => Promise.resolve(undefined) } as unknown as RateLimiter;
  const exchanges = new McpExchanges({ perClient: 2, total: 2, deadlineMs });
  return {
    controller: new McpController(new McpToolServer(tools, calls), exchanges, limiter),
    exchanges,
  };
}

async function post(controller: McpController) {
  const sent: { status?: number } = {};
  const reply = {
    status(code: number) {
      sent.status = code;
      return reply;
    },
    header() {
      return reply;
    },
  };
  const request = {
    ip: '10.0.0.1',
    headers: { 'content-type': 'application/json' },
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'get_ticker', arguments: {} },
    },
  };
  const body = await controller.post(
    request as unknown as FastifyRequest,
    reply as unknown as FastifyReply,
  );
  return { status: sent.status, body: JSON.parse(body) as Record<string, unknown> };
}

describe('McpController: every exchange ends by its deadline', () => {
  it('aborts a call still running at the deadline; the call answers an error and the exchange ends', async () => {
    const { controller, exchanges } = controllerWith(
      (_tool, call) =>
        new Promise<never>((_resolve, reject) => {
          call.signal.addEventListener('abort', () => {
            reject(new Error('abandoned'));
          });
        }),
      50,
    );
    const { status, body } = await post(controller);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      error: { message: expect.stringMatching(/abandoned/) as string },
    });
    expect(exchanges.inProgress()).toBe(0);
  });

  it('answers 504 (-32001) for a call that ignores the deadline, and frees the exchange', async () => {
    const { controller, exchanges } = controllerWith(() => new Promise<never>(() => undefined), 50);
    const { status, body } = await post(controller);
    expect(status).toBe(504);
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32001 } });
    expect(exchanges.inProgress()).toBe(0);
  }, 10_000);

  it('waits past the deadline for a call whose settlement is in flight, and answers it, never 504', async () => {
    const { controller, exchanges } = controllerWith(
      (_tool, call) =>
        new Promise((resolve) => {
          call.signal.addEventListener('abort', () => {
            const outcome = new Promise((settled) => {
              // the settlement lands later than the wind-down a 504 would follow
              setTimeout(() => {
                settled(answered({ currency: 'USD' }, SETTLEMENT));
              }, 2_500);
            });
            call.waitFor(outcome);
            void outcome.then(resolve);
          });
        }),
      50,
    );
    const { status, body } = await post(controller);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      result: {
        structuredContent: { currency: 'USD' },
        _meta: { 'x402/payment-response': SETTLEMENT },
      },
    });
    expect(exchanges.inProgress()).toBe(0);
  }, 10_000);
});
