import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { x402Client } from '@x402/fetch';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { ToyWordsModule } from './mcp-toy-route/toy-words.js';

/** `POST /mcp` as a newcomer meets it: plain curl-like posts, broken bodies, a new route. */
describe('MCP for a newcomer, and a new route as a tool (e2e, local chain)', () => {
  let stack: PaidApp;
  let client: Client;

  beforeAll(async () => {
    stack = await startPaidApp({ env: { X402_SCHEMES: 'exact' }, features: [ToyWordsModule] });
    client = new Client({ name: 'mcp-newcomer', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.service.url}/mcp`)));
  }, 120_000);

  afterAll(async () => {
    await client.close();
    await stack.close();
  });

  function post(body: string, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${stack.service.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
  }

  const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

  it('serves a POST without the MCP Accept pair, or accepting only JSON, with JSON', async () => {
    const accepts: Record<string, string>[] = [
      {},
      { accept: 'application/json' },
      { accept: '*/*' },
    ];
    for (const headers of accepts) {
      const response = await post(LIST, headers);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id: 1 });
    }
  });

  it('answers 406 to a client that accepts no JSON', async () => {
    const response = await post(LIST, { accept: 'text/html' });
    expect(response.status).toBe(406);
  });

  it('answers a body that is no JSON with JSON-RPC’s parse error, not a problem+json', async () => {
    const response = await post('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: expect.stringMatching(/^Parse error/) as string },
    });
  });

  it('answers a JSON body that is no JSON-RPC message with a JSON-RPC error', async () => {
    const response = await post('[1, 2]');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
  });

  it('lists a tool for every GET route under /v1/ of the OpenAPI document that answers JSON, named by its operationId; the price stream is none', async () => {
    const { tools } = await client.listTools();
    const document = (await (await stack.service.get('/openapi.json')).json()) as {
      paths: Record<
        string,
        {
          get?: { operationId: string; responses: Record<string, { content?: object }> };
        }
      >;
    };
    const gets = Object.entries(document.paths)
      .filter(([path, operations]) => path.startsWith('/v1/') && operations.get !== undefined)
      .map(([, operations]) => operations.get as NonNullable<typeof operations.get>);
    const toolName = (operationId: string): string =>
      operationId.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
    // a tool call has one result: an answer that goes on as events (text/event-stream) is no tool
    const streamed = (get: (typeof gets)[number]): boolean =>
      Object.keys(get.responses['200']?.content ?? {}).includes('text/event-stream');
    const routes = gets.filter((get) => !streamed(get)).map((get) => toolName(get.operationId));
    expect(routes).toContain('get_toy_word');
    expect(tools.map((tool) => tool.name).sort()).toEqual(routes.sort());
    const streams = gets.filter(streamed).map((get) => toolName(get.operationId));
    expect(streams).toEqual(['stream_prices']);
  });

  it('lists a new route as a tool: its operationId, summary, path and query parameters, price', async () => {
    const { tools } = await client.listTools();
    const toy = tools.find((tool) => tool.name === 'get_toy_word');
    expect(toy?.description).toMatch(/^A word and how long it is\. Costs \$0\.001 per call/);
    expect(toy?.inputSchema).toEqual({
      type: 'object',
      properties: {
        word: { type: 'string', pattern: '^[a-z]+$', description: 'Any word of letters.' },
        shout: { type: 'boolean', description: 'Upper-case the word.' },
      },
      required: ['word'],
      additionalProperties: false,
    });
  });

  it('sells the new route’s tool at its price, its arguments in the URL', async () => {
    const unpaid = await client.callTool({ name: 'get_toy_word', arguments: { word: 'hello' } });
    const required = unpaid.structuredContent as PaymentRequired;
    expect(required.resource.url).toBe('mcp://tool/get_toy_word');
    expect(required.accepts[0]?.amount).toBe('1000');
    const payer = new x402Client().register('eip155:*', new ExactEvmScheme(stack.buyer.account));
    const before = await stack.balances();
    const paid = await client.callTool({
      name: 'get_toy_word',
      arguments: { word: 'hello', shout: true },
      _meta: { 'x402/payment': await payer.createPaymentPayload(required) },
    });
    expect(paid.structuredContent).toEqual({ word: 'HELLO', length: 5 });
    expect((await stack.balances()).payTo - before.payTo).toBe(1000n);
  });

  it('refuses arguments the route does not take, or a missing one, as invalid params', async () => {
    await expect(
      client.callTool({ name: 'get_toy_word', arguments: { word: 'hi', colour: 'red' } }),
    ).rejects.toThrow(/takes no argument `colour`/);
    await expect(client.callTool({ name: 'get_toy_word', arguments: {} })).rejects.toThrow(
      /needs the argument `word`/,
    );
  });
});
