import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { x402Client } from '@x402/fetch';
import { z } from 'zod/v4';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { fundedBuyer, type Buyer } from './support/paying-clients.js';
import { parseExposition, sampleValue } from './support/prometheus.js';
import { RpcProxy } from './support/rpc-proxy.js';
import { paymentRequiredOf, v2Header } from './support/x402-payloads.js';

/** A tools/call result as the client receives it. */
interface ToolResult {
  readonly isError?: boolean;
  readonly content: readonly unknown[];
  readonly structuredContent?: unknown;
  readonly _meta?: Record<string, unknown>;
}

/** What the HTTP routes sell, at their @Paid prices; the tools must ask exactly these. */
const PRICES = { get_ticker: '2000', get_tickers: '8000', get_all_tickers: '10000' } as const;

describe('paid MCP tools (Streamable HTTP, the MCP SDK client, the local chain)', () => {
  let stack: PaidApp;
  let client: Client;
  let buyer: Buyer;
  let payer: x402Client;

  beforeAll(async () => {
    stack = await startPaidApp();
    buyer = await fundedBuyer(stack.chain);
    payer = new x402Client().register('eip155:*', new ExactEvmScheme(buyer.account));
    client = new Client({ name: 'mcp-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.service.url}/mcp`)));
  });

  afterAll(async () => {
    await client.close();
    await stack.close();
  });

  function call(
    name: string,
    args: Record<string, unknown> = {},
    meta?: Record<string, unknown>,
  ): Promise<ToolResult> {
    return client.callTool({
      name,
      arguments: args,
      ...(meta === undefined ? {} : { _meta: meta }),
    }) as Promise<ToolResult>;
  }

  async function required(name: string, args: Record<string, unknown> = {}) {
    const result = await call(name, args);
    expect(result.isError).toBe(true);
    return result.structuredContent as PaymentRequired;
  }

  async function pay(name: string, args: Record<string, unknown> = {}): Promise<PaymentPayload> {
    return payer.createPaymentPayload(await required(name, args));
  }

  it('lists a tool per GET route under /v1/; the paid ones name the price of their HTTP route', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'get_all_tickers',
      'get_markets',
      'get_ohlc',
      'get_price_at',
      'get_sources',
      'get_ticker',
      'get_tickers',
      'list_assets',
    ]);
    const described = Object.fromEntries(tools.map((tool) => [tool.name, tool.description]));
    expect(described['get_ticker']).toContain('$0.002 per call');
    expect(described['get_tickers']).toContain('$0.008 per call');
    expect(described['get_all_tickers']).toContain('$0.010 per call');
    expect(described['get_markets']).toContain('$0.005 per call');
    expect(described['get_ohlc']).toContain('$0.005 per call');
    expect(described['get_price_at']).toContain('$0.003 per call');
  });

  it('answers the free tools with the same JSON as their routes', async () => {
    const assets = await call('list_assets');
    const http = await (await stack.service.get('/v1/assets')).json();
    expect(assets.structuredContent).toEqual(http);
    expect(JSON.parse((assets.content[0] as { text: string }).text)).toEqual(http);
    const sources = await call('get_sources');
    expect(sources.structuredContent).toMatchObject({
      payments: { networks: [{ network: 'eip155:84532' }] },
    });
  });

  it.each(Object.entries(PRICES))(
    '%s unpaid: the PaymentRequired (tool-result binding) at its route’s price, for the tool',
    async (name, amount) => {
      const args =
        name === 'get_ticker'
          ? { symbol: 'BTC' }
          : name === 'get_tickers'
            ? { symbols: ['BTC', 'ETH'] }
            : {};
      const result = await call(name, args);
      expect(result.isError).toBe(true);
      const paymentRequired = result.structuredContent as PaymentRequired;
      expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(paymentRequired);
      expect(paymentRequired).toMatchObject({
        x402Version: 2,
        resource: { url: `mcp://tool/${name}` },
      });
      // the HTTP route's offers: each scheme at the route's price, to X402_PAY_TO
      expect(
        paymentRequired.accepts.map((accept) => [accept.scheme, accept.amount, accept.payTo]),
      ).toEqual([
        ['exact', amount, stack.payTo],
        ['batch-settlement', amount, stack.payTo],
      ]);
      expect(paymentRequired.extensions?.['bazaar']).toMatchObject({
        info: { input: { type: 'mcp', toolName: name } },
      });
    },
  );

  it('answers payment_required (extension binding) to a client that advertises org.x402/payment', async () => {
    const result = await client.request(
      {
        method: 'tools/call',
        params: {
          name: 'get_ticker',
          arguments: { symbol: 'BTC' },
          _meta: {
            'io.modelcontextprotocol/clientCapabilities': {
              extensions: { 'org.x402/payment': {} },
            },
          },
        },
      },
      z.looseObject({ resultType: z.string(), paymentRequired: z.unknown() }),
    );
    expect(result.resultType).toBe('payment_required');
    expect(result.paymentRequired).toMatchObject({
      x402Version: 2,
      accepts: expect.arrayContaining([
        expect.objectContaining({ scheme: 'exact', amount: '2000' }),
      ]) as unknown,
      resource: { url: 'mcp://tool/get_ticker' },
    });
  });

  it('sells each paid tool for exactly its price, with the settlement in _meta', async () => {
    const before = await stack.balances();
    const buyerBefore = await stack.chain.usdcBalance(buyer.account.address);
    const cases = [
      [
        'get_ticker',
        { symbol: 'btc' },
        (body: Record<string, unknown>) => {
          expect(body).toMatchObject({
            currency: 'USD',
            price: { BTC: expect.any(Number) as number },
          });
        },
      ],
      [
        'get_tickers',
        { symbols: ['BTC', 'ETH'] },
        (body: Record<string, unknown>) => {
          expect(Object.keys(body['prices'] as object)).toEqual(['BTC', 'ETH']);
        },
      ],
      [
        'get_all_tickers',
        {},
        (body: Record<string, unknown>) => {
          expect(body).toHaveProperty('prices.BTC');
        },
      ],
    ] as const;
    for (const [name, args, check] of cases) {
      const payment = await pay(name, args);
      const result = await call(name, args, { 'x402/payment': payment });
      expect(result.isError).toBeFalsy();
      check(result.structuredContent as Record<string, unknown>);
      expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(
        result.structuredContent,
      );
      expect(result._meta?.['x402/payment-response']).toMatchObject({
        success: true,
        network: 'eip155:84532',
        payer: buyer.account.address,
        transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) as string,
      });
    }
    const after = await stack.balances();
    expect(after.payTo - before.payTo).toBe(2000n + 8000n + 10000n);
    expect(buyerBefore - (await stack.chain.usdcBalance(buyer.account.address))).toBe(
      2000n + 8000n + 10000n,
    );
    const metrics = parseExposition(await (await stack.service.get('/metrics')).text());
    expect(
      sampleValue(metrics, 'x402_payments_total', { route: 'mcp:get_ticker', outcome: 'settled' }),
    ).toBe(1);
  });

  it('refuses, moving nothing: a replay, another tool’s payment, an HTTP route’s, an underpayment, a Permit2 shape', async () => {
    const before = await stack.balances();
    const payment = await pay('get_ticker', { symbol: 'BTC' });
    expect(
      (await call('get_ticker', { symbol: 'BTC' }, { 'x402/payment': payment })).isError,
    ).toBeFalsy();
    const paidOnce = await stack.balances();
    expect(paidOnce.payTo - before.payTo).toBe(2000n);

    const replay = await call('get_ticker', { symbol: 'BTC' }, { 'x402/payment': payment });
    expect(replay.isError).toBe(true);
    expect((replay.structuredContent as { error: string }).error).toMatch(/^payment_already_used/);

    const forAnotherTool = await pay('get_tickers', { symbols: ['BTC', 'ETH'] });
    const wrongTool = await call('get_all_tickers', {}, { 'x402/payment': forAnotherTool });
    expect(wrongTool.isError).toBe(true);
    expect((wrongTool.structuredContent as { error: string }).error).toMatch(
      /^resource_mismatch|^payment_not_offered/,
    );

    const httpRequired = paymentRequiredOf(await stack.service.get('/v1/ticker/BTC'));
    const forHttp = await payer.createPaymentPayload(httpRequired);
    const httpOnTool = await call('get_ticker', { symbol: 'BTC' }, { 'x402/payment': forHttp });
    expect((httpOnTool.structuredContent as { error: string }).error).toMatch(/^resource_mismatch/);
    // and the other way round: a tool's payment on the HTTP route
    const toolOnHttp = await stack.service.get('/v1/ticker/BTC', {
      headers: v2Header(await pay('get_ticker', { symbol: 'BTC' })),
    });
    expect(toolOnHttp.status).toBe(402);
    expect(paymentRequiredOf(toolOnHttp).error).toMatch(/^resource_mismatch/);

    const under = await pay('get_ticker', { symbol: 'BTC' });
    const authorization = (under.payload as { authorization: { value: string } }).authorization;
    authorization.value = '1999';
    const underpaid = await call('get_ticker', { symbol: 'BTC' }, { 'x402/payment': under });
    expect((underpaid.structuredContent as { error: string }).error).toMatch(/value_mismatch/);

    const permit2 = await pay('get_ticker', { symbol: 'BTC' });
    const shaped = { ...permit2, payload: { ...permit2.payload, permit2Authorization: {} } };
    const refused = await call('get_ticker', { symbol: 'BTC' }, { 'x402/payment': shaped });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ status: 400, code: 'invalid_payment' });

    expect(await stack.balances()).toEqual(paidOnce);
  });

  it('lists the paid tools and routes in /.well-known/x402', async () => {
    const discovery = (await (await stack.service.get('/.well-known/x402')).json()) as {
      version: number;
      resources: string[];
    };
    expect(discovery.version).toBe(1);
    expect(discovery.resources).toEqual(
      expect.arrayContaining([
        `${stack.service.url}/v1/ticker/{symbol}`,
        'mcp://tool/get_ticker',
        'mcp://tool/get_tickers',
        'mcp://tool/get_all_tickers',
      ]),
    );
  });

  it('checks arguments like the route before asking for money: an invalid symbol is a tool error, nothing asked', async () => {
    const bad = await call('get_ticker', { symbol: 'B$C' });
    expect(bad.structuredContent).toMatchObject({ status: 400, code: 'invalid_symbol' });
    const unknown = await call('get_ticker', { symbol: 'NOPE' });
    expect(unknown.structuredContent).toMatchObject({ status: 404, code: 'unknown_symbol' });
    const list = await call('get_tickers', { symbols: ['BTC'] });
    expect(list.structuredContent).toMatchObject({ status: 400, code: 'invalid_symbol_list' });
  });

  it('honours payment-identifier: the same id and payment get the answer again, charged once', async () => {
    const paymentRequired = await required('get_ticker', { symbol: 'ETH' });
    const payment = await payer.createPaymentPayload(paymentRequired);
    payment.extensions = {
      ...payment.extensions,
      'payment-identifier': { info: { required: false, id: 'mcp-order-000000000001' } },
    };
    const before = await stack.balances();
    const first = await call('get_ticker', { symbol: 'ETH' }, { 'x402/payment': payment });
    const again = await call('get_ticker', { symbol: 'ETH' }, { 'x402/payment': payment });
    expect(first.isError).toBeFalsy();
    expect(again.structuredContent).toEqual(first.structuredContent);
    expect(again._meta?.['x402/payment-response']).toEqual(first._meta?.['x402/payment-response']);
    expect((await stack.balances()).payTo - before.payTo).toBe(2000n);
  });
});

describe('a paid MCP tool whose settlement outcome is unknown', () => {
  let stack: PaidApp;
  let proxy: RpcProxy | undefined;
  let client: Client;

  beforeAll(async () => {
    stack = await startPaidApp({
      env: { X402_SCHEMES: 'exact' },
      beforeApp: async (chain) => {
        proxy = await RpcProxy.start(chain.rpcUrl);
        return { X402_RPC_URL: proxy.url };
      },
    });
    client = new Client({ name: 'mcp-e2e-unknown', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.service.url}/mcp`)));
  });

  afterAll(async () => {
    await client.close();
    await stack.close();
    await proxy?.close();
  });

  it('answers a tool error settlement_unknown naming the transaction; the retry with its id gets the answer once reconciled', async () => {
    const buyer = await fundedBuyer(stack.chain);
    const payer = new x402Client().register('eip155:*', new ExactEvmScheme(buyer.account));
    const unpaid = (await client.callTool({
      name: 'get_ticker',
      arguments: { symbol: 'BTC' },
    })) as ToolResult;
    const payment = await payer.createPaymentPayload(unpaid.structuredContent as PaymentRequired);
    payment.extensions = {
      ...payment.extensions,
      'payment-identifier': { info: { required: false, id: 'mcp-unknown-0000000001' } },
    };
    const before = await stack.balances();
    proxy?.fail('eth_sendRawTransaction', { kind: 'error-after-forward' });
    const paid = (await client.callTool({
      name: 'get_ticker',
      arguments: { symbol: 'BTC' },
      _meta: { 'x402/payment': payment },
    })) as ToolResult;
    proxy?.clear();
    expect(paid.isError).toBe(true);
    expect(paid.structuredContent).toMatchObject({ status: 502, code: 'settlement_unknown' });
    expect((paid.structuredContent as { detail: string }).detail).toMatch(
      /transaction 0x[0-9a-f]{64}/,
    );
    // the money moved: the reconciler proves it, and the same id then gets the answer, free
    let again: ToolResult | undefined;
    for (const until = Date.now() + 15_000; Date.now() < until;) {
      again = (await client.callTool({
        name: 'get_ticker',
        arguments: { symbol: 'BTC' },
        _meta: { 'x402/payment': payment },
      })) as ToolResult;
      if (again.isError !== true) break;
      expect(again.structuredContent).toMatchObject({ code: 'settlement_unknown' });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(again?.isError).toBeFalsy();
    expect(again?.structuredContent).toMatchObject({ currency: 'USD' });
    expect((await stack.balances()).payTo - before.payTo).toBe(2000n);
  });
});
