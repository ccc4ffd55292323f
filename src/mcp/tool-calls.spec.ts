import type { HttpAdapterHost } from '@nestjs/core';
import { ErrorCode as McpErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyRequest } from 'fastify';
import { PaidCalls, type PaidCall } from '../payments/index.js';
import type { RouteTool } from './route-tools.js';
import { snakeCase } from './route-tools.js';
import { ToolCalls, urlOf, type ToolCall } from './tool-calls.js';

const TOOL: RouteTool = {
  name: 'get_things',
  description: 'Things',
  inputSchema: {},
  price: '$0.001',
  path: '/v1/things/:symbol/:symbols',
  arguments: [
    { name: 'symbol', in: 'path', required: true },
    { name: 'symbols', in: 'path', required: true },
    { name: 'limit', in: 'query', required: false },
  ],
};

describe('urlOf: a tool call’s arguments as its route’s URL', () => {
  it('fills each path parameter by name, URL-encoded; a list comma-separated; the rest as query', () => {
    expect(urlOf(TOOL, { symbol: 'a/b', symbols: ['BTC', 'ETH'], limit: 3 })).toBe(
      '/v1/things/a%2Fb/BTC%2CETH?limit=3',
    );
    expect(urlOf(TOOL, { symbol: 'x', symbols: 'y' })).toBe('/v1/things/x/y');
  });

  it('refuses an unknown, missing, empty or structured argument as invalid params', () => {
    for (const args of [
      { symbol: 'x', symbols: 'y', colour: 'red' },
      { symbol: 'x' },
      { symbol: '', symbols: 'y' },
      { symbol: { nested: true }, symbols: 'y' },
      { symbol: [['x']], symbols: 'y' },
    ]) {
      expect(() => urlOf(TOOL, args)).toThrow(McpError);
    }
  });
});

describe('snakeCase', () => {
  it('names a tool from its operationId', () => {
    expect(snakeCase('getTicker')).toBe('get_ticker');
    expect(snakeCase('getAllTickers')).toBe('get_all_tickers');
    expect(snakeCase('listAssets')).toBe('list_assets');
  });
});

describe('ToolCalls at its exchange’s deadline', () => {
  const PAID: RouteTool = {
    name: 'get_ticker',
    description: 'A price',
    inputSchema: {},
    price: '$0.002',
    path: '/v1/ticker/:symbol',
    arguments: [{ name: 'symbol', in: 'path', required: true }],
  };

  /**
   * ToolCalls over a Fastify whose `inject` runs `route` on the paid call the request stands
   * for, as the paywall would find it; the route answers `{"currency":"USD"}` once `answer`
   * is called.
   */
  function toolCallsWith(route: (call: PaidCall | undefined) => void) {
    const paidCalls = new PaidCalls();
    let answer: () => void = () => undefined;
    const inject = (options: { headers: Record<string, string> }) =>
      new Promise((resolve) => {
        const request = { headers: options.headers, raw: { socket: null } };
        route(paidCalls.of(request as unknown as FastifyRequest));
        answer = () => {
          resolve({ statusCode: 200, body: '{"currency":"USD"}', headers: {} });
        };
      });
    const adapter = {
      httpAdapter: { getInstance: () => ({ inject }) },
    } as unknown as HttpAdapterHost;
    return {
      calls: new ToolCalls(adapter, paidCalls),
      answer: () => {
        answer();
      },
    };
  }

  function callOf(deadline: AbortController, waited: Promise<unknown>[]): ToolCall {
    return {
      args: { symbol: 'BTC' },
      payment: undefined,
      extension: false,
      ip: '10.0.0.1',
      userAgent: undefined,
      signal: deadline.signal,
      waitFor: (outcome) => waited.push(outcome),
    };
  }

  it('cancels a call whose settlement has not begun: -32001 at once, its request aborted', async () => {
    let paid: PaidCall | undefined;
    const { calls } = toolCallsWith((call) => (paid = call));
    const deadline = new AbortController();
    const waited: Promise<unknown>[] = [];
    const result = calls.call(PAID, callOf(deadline, waited));
    deadline.abort();
    await expect(result).rejects.toMatchObject({ code: McpErrorCode.RequestTimeout });
    expect(paid?.signal.aborted).toBe(true);
    expect(paid?.beginSettlement()).toBe(false);
    expect(waited).toEqual([]);
  });

  it('waits for a call whose settlement is in flight, and hands its outcome to the exchange', async () => {
    const { calls, answer } = toolCallsWith((call) => call?.beginSettlement());
    const deadline = new AbortController();
    const waited: Promise<unknown>[] = [];
    const result = calls.call(PAID, callOf(deadline, waited));
    deadline.abort();
    expect(waited).toHaveLength(1);
    answer();
    await expect(result).resolves.toMatchObject({ structuredContent: { currency: 'USD' } });
    await expect(waited[0]).resolves.toBe(await result);
  });

  it('runs no call its exchange’s deadline has already passed', async () => {
    let ran = false;
    const { calls } = toolCallsWith(() => (ran = true));
    const deadline = new AbortController();
    deadline.abort();
    await expect(calls.call(PAID, callOf(deadline, []))).rejects.toMatchObject({
      code: McpErrorCode.RequestTimeout,
    });
    expect(ran).toBe(false);
  });
});
