import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { x402Client } from '@x402/fetch';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { attestationProblem, type PricedBody } from '../src/attestation/price-attestation.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { paymentRequiredOf, v2Header } from './support/x402-payloads.js';

/** One JSON-RPC answer of a `POST /mcp`. */
interface RpcAnswer {
  readonly id?: number | null;
  readonly result?: {
    readonly isError?: boolean;
    readonly structuredContent?: Record<string, unknown>;
    readonly _meta?: Record<string, unknown>;
  };
  readonly error?: { readonly code: number; readonly message: string };
}

const UNPAID_LIMIT = 3;
const FREE_LIMIT = 20;
const MAX_CONNECTIONS = 30;
const KEY = generatePrivateKey();

/**
 * What an attacker (and a careless client) can do with `POST /mcp`, each answered as the route
 * it stands for would be: a client address per test (X-Forwarded-For behind TRUST_PROXY), so
 * one test's rate limits never touch another's.
 */
describe('POST /mcp under attack (e2e, local chain)', () => {
  let stack: PaidApp;
  let payer: x402Client;

  beforeAll(async () => {
    stack = await startPaidApp({
      env: {
        X402_SCHEMES: 'exact',
        TRUST_PROXY: 'true',
        RATE_LIMIT_UNPAID: String(UNPAID_LIMIT),
        RATE_LIMIT_FREE: String(FREE_LIMIT),
        HTTP_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
        ATTESTATION_PRIVATE_KEY: KEY,
      },
    });
    payer = new x402Client().register('eip155:*', new ExactEvmScheme(stack.buyer.account));
  }, 120_000);

  afterAll(async () => {
    await stack.close();
  });

  function post(client: string, body: unknown, timeoutMs = 10_000): Promise<Response> {
    return fetch(`${stack.service.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-forwarded-for': client,
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  }

  function toolCall(id: number, args: Record<string, unknown>, payment?: PaymentPayload) {
    return {
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name: 'get_ticker',
        arguments: args,
        ...(payment === undefined ? {} : { _meta: { 'x402/payment': payment } }),
      },
    };
  }

  async function requiredFor(client: string, payer_ = payer): Promise<PaymentPayload> {
    const answer = (await (await post(client, toolCall(1, { symbol: 'BTC' }))).json()) as RpcAnswer;
    return payer_.createPaymentPayload(
      answer.result?.structuredContent as unknown as PaymentRequired,
    );
  }

  it('counts each paid call of a batch like its HTTP request: unfunded payments past the limit are 429s, not verifications', async () => {
    const client = '10.0.0.1';
    const unfunded = new x402Client().register(
      'eip155:*',
      new ExactEvmScheme(privateKeyToAccount(generatePrivateKey())),
    );
    const batch = [];
    for (let id = 1; id <= 10; id += 1) {
      batch.push(
        toolCall(id, { symbol: 'BTC' }, await requiredFor(`10.0.1.${String(id)}`, unfunded)),
      );
    }
    const response = await post(client, batch);
    expect(response.status).toBe(200);
    const answers = (await response.json()) as RpcAnswer[];
    expect(answers).toHaveLength(10);
    const codes = answers.map((answer) => answer.result?.structuredContent?.['code']);
    const limited = codes.filter((code) => code === 'rate_limited').length;
    // at most the unpaid limit (one more while the last count lands) were verified at all
    expect(limited).toBeGreaterThanOrEqual(10 - UNPAID_LIMIT - 1);
    expect(answers.every((answer) => answer.result?.isError === true)).toBe(true);
  });

  it('refuses a batch with two requests of one id before selling either', async () => {
    const client = '10.0.0.2';
    const first = await requiredFor(client);
    const second = await requiredFor(client);
    const before = await stack.balances();
    const response = await post(client, [
      toolCall(7, { symbol: 'BTC' }, first),
      toolCall(7, { symbol: 'BTC' }, second),
    ]);
    expect(response.status).toBe(400);
    expect(((await response.json()) as RpcAnswer).error?.code).toBe(-32600);
    expect(await stack.balances()).toEqual(before);
  });

  it('never settles a paid call its own batch cancels, and the exchange ends', async () => {
    const client = '10.0.0.3';
    const payment = await requiredFor(client);
    const before = await stack.balances();
    const response = await post(client, [
      toolCall(1, { symbol: 'BTC' }, payment),
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
    ]);
    expect(response.status).toBe(202);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await stack.balances()).toEqual(before);
  });

  it('one address’s flood of exchanges leaves other clients their /health/live and /v1/assets', async () => {
    const flood = Array.from({ length: MAX_CONNECTIONS }, () =>
      post(
        '10.0.0.4',
        [
          toolCall(1, { symbol: 'BTC' }),
          { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
        ],
        5_000,
      ).then(
        (response) => response.status,
        () => 0,
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const other = { 'x-forwarded-for': '10.0.0.40' };
    const live = await stack.service.get('/health/live', {
      headers: other,
      signal: AbortSignal.timeout(3_000),
    });
    const assets = await stack.service.get('/v1/assets', {
      headers: other,
      signal: AbortSignal.timeout(3_000),
    });
    expect([live.status, assets.status]).toEqual([200, 200]);
    // every exchange of the flood ended: answered, or refused at once (the per-client bound)
    const statuses = await Promise.all(flood);
    expect(statuses.filter((status) => status !== 202 && status !== 429)).toEqual([]);
  });

  it('an outside request carrying the tool-call marker is an HTTP request: a tool’s payment is refused', async () => {
    const client = '10.0.0.6';
    const payment = await requiredFor(client);
    const response = await stack.service.get('/v1/ticker/BTC', {
      headers: { ...v2Header(payment), 'x402-paid-call': 'forged', 'x-forwarded-for': client },
    });
    expect(response.status).toBe(402);
    expect(paymentRequiredOf(response).error).toMatch(/^resource_mismatch/);
  });

  it('a paid get_ticker carries an attestation that verifies against /.well-known/price-attestation', async () => {
    const client = '10.0.0.7';
    const answer = (await (
      await post(client, toolCall(1, { symbol: 'ETH' }, await requiredFor(client)))
    ).json()) as RpcAnswer;
    expect(answer.result?.isError).toBeFalsy();
    const attestation = answer.result?._meta?.['x402/price-attestation'];
    expect(typeof attestation).toBe('string');
    const { signer } = (await (
      await stack.service.get('/.well-known/price-attestation')
    ).json()) as {
      signer: `0x${string}`;
    };
    const body = answer.result?.structuredContent as unknown as PricedBody;
    await expect(attestationProblem(attestation as string, body, signer)).resolves.toBeUndefined();
  });

  it('counts a POST of notifications alone as a free request', async () => {
    const statuses: number[] = [];
    for (let sent = 0; sent <= FREE_LIMIT; sent += 1) {
      const response = await post('10.0.0.10', {
        jsonrpc: '2.0',
        method: 'notifications/initialized',
      });
      statuses.push(response.status);
    }
    expect(statuses.slice(0, FREE_LIMIT).every((status) => status === 202)).toBe(true);
    expect(statuses[FREE_LIMIT]).toBe(429);
  });

  it('never limits an MCP client that pays each PaymentRequired it gets, as over HTTP', async () => {
    const client = '10.0.0.9';
    for (let bought = 0; bought < UNPAID_LIMIT + 2; bought += 1) {
      const answer = (await (
        await post(client, toolCall(1, { symbol: 'BTC' }, await requiredFor(client)))
      ).json()) as RpcAnswer;
      expect(answer.result?.structuredContent).toMatchObject({ currency: 'USD' });
    }
  });

  it('serves a paying MCP client after its free bucket is spent', async () => {
    const address = '10.0.0.8';
    const client = new Client({ name: 'mcp-free-spent', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.service.url}/mcp`), {
        requestInit: { headers: { 'x-forwarded-for': address } },
      }),
    );
    let status = 200;
    for (let sent = 0; sent <= FREE_LIMIT && status !== 429; sent += 1) {
      status = (await stack.service.get('/v1/assets', { headers: { 'x-forwarded-for': address } }))
        .status;
    }
    expect(status).toBe(429);
    const unpaid = await client.callTool({ name: 'get_ticker', arguments: { symbol: 'BTC' } });
    const payment = await payer.createPaymentPayload(unpaid.structuredContent as PaymentRequired);
    const paid = await client.callTool({
      name: 'get_ticker',
      arguments: { symbol: 'BTC' },
      _meta: { 'x402/payment': payment },
    });
    expect(paid.isError).toBeFalsy();
    expect(paid.structuredContent).toMatchObject({ currency: 'USD' });
    await client.close();
  });
});
