import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { x402Client } from '@x402/fetch';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  PRICE_ATTESTATION_HEADER,
  attestationProblem,
  decodePriceAttestation,
  type PricedBody,
} from '../src/attestation/price-attestation.js';
import { requirementFor, responseJson, startPaidApp, type PaidApp } from './support/paid-app.js';
import { fundedBuyer } from './support/paying-clients.js';
import { parseExposition, sampleValue } from './support/prometheus.js';
import { paymentRequiredOf, signedPayment, v2Header } from './support/x402-payloads.js';
import { ToyProductModule } from './toy-product/toy-product.module.js';
import { ToyWordBook } from './toy-product/toy-word-book.js';

const KEY = generatePrivateKey();
const SIGNER = privateKeyToAccount(KEY).address;
const ROUTE = '/v1/toy-words/:word';

describe('a paid data product added by another module (the toy word prices)', () => {
  let stack: PaidApp;

  beforeAll(async () => {
    stack = await startPaidApp({
      // the registration line: the product's module, served beside the built-in ones
      features: [ToyProductModule],
      env: { ATTESTATION_PRIVATE_KEY: KEY },
    });
  }, 120_000);

  afterAll(async () => {
    await stack.close();
  });

  async function challenges(): Promise<number> {
    const samples = parseExposition(await (await stack.service.get('/metrics')).text());
    return sampleValue(samples, 'x402_payments_total', { route: ROUTE, outcome: 'challenged' });
  }

  it('asks for its price in a 402', async () => {
    const response = await stack.service.get('/v1/toy-words/apple');
    expect(response.status).toBe(402);
    const required = paymentRequiredOf(response);
    expect(required.resource.url).toContain('/v1/toy-words/apple');
    expect(required.accepts.map((accepted) => [accepted.scheme, accepted.amount])).toEqual([
      ['exact', '4000'],
      ['batch-settlement', '4000'],
    ]);
    expect(response.headers.get(PRICE_ATTESTATION_HEADER)).toBeNull();
  });

  it.each([
    ['a malformed word', '/v1/toy-words/app1e', 400, 'bad_request'],
    ['a word too long', `/v1/toy-words/${'a'.repeat(21)}`, 400, 'bad_request'],
    ['an unknown word', '/v1/toy-words/quince', 404, 'route_not_found'],
  ])(
    '%s is refused before any 402: a paying client pays nothing, a sent payment is not taken',
    async (_what, path, status, code) => {
      const challenged = await challenges();
      const before = await stack.balances();
      const refused = await stack.buyer.fetchV2(`${stack.service.url}${path}`);
      expect(refused.status).toBe(status);
      expect(refused.headers.get('payment-required')).toBeNull();
      expect(await responseJson(refused)).toMatchObject({ code });

      const offer = await requirementFor(stack, '/v1/toy-words/apple');
      const payment = await signedPayment(stack.buyer.account, offer);
      const paid = await stack.service.get(path, { headers: v2Header(payment) });
      expect(paid.status).toBe(status);
      expect(paid.headers.get('payment-response')).toBeNull();
      expect(await stack.balances()).toEqual(before);
      // the one 402 is requirementFor's own
      expect(await challenges()).toBe(challenged + 1);
    },
  );

  it('while its data is unavailable answers 503 before any 402, nothing charged', async () => {
    const book = stack.service.app.get(ToyWordBook);
    const challenged = await challenges();
    const before = await stack.balances();
    book.setOpen(false);
    try {
      const response = await stack.buyer.fetchV2(`${stack.service.url}/v1/toy-words/apple`);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(await responseJson(response)).toMatchObject({ code: 'price_unavailable' });
    } finally {
      book.setOpen(true);
    }
    expect(await stack.balances()).toEqual(before);
    expect(await challenges()).toBe(challenged);
  });

  it('is sold: the official client pays its price and gets an answer signed by the service', async () => {
    const info = (await (await stack.service.get('/.well-known/price-attestation')).json()) as {
      signer: string;
    };
    expect(info.signer).toBe(SIGNER);
    const before = await stack.balances();
    const response = await stack.buyer.fetchV2(`${stack.service.url}/v1/toy-words/APPLE`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as PricedBody;
    expect(body).toEqual({
      timestamp: '2026-11-20T12:00:00.000Z',
      currency: 'USD',
      price: { apple: 1.25 },
    });
    const header = response.headers.get(PRICE_ATTESTATION_HEADER);
    await expect(attestationProblem(header, body, SIGNER)).resolves.toBeUndefined();
    expect(decodePriceAttestation(header ?? '').message.prices).toEqual([
      { symbol: 'apple', price: 125_000_000n, venues: 0, spreadBps: 0 },
    ]);
    const after = await stack.balances();
    expect(after.payTo - before.payTo).toBe(4000n);
    expect(before.buyer - after.buyer).toBe(4000n);
  });

  it('is in the OpenAPI document with its price and its signed 200', async () => {
    const document = (await (await stack.service.get('/openapi.json')).json()) as {
      paths: Record<
        string,
        {
          get?: {
            operationId?: string;
            'x-x402-price'?: unknown;
            responses: Record<string, { headers?: Record<string, unknown> }>;
          };
        }
      >;
    };
    const operation = document.paths['/v1/toy-words/{word}']?.get;
    expect(operation?.operationId).toBe('getToyWord');
    expect(operation?.['x-x402-price']).toEqual({ amount: '0.004', currency: 'USD' });
    expect(Object.keys(operation?.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '402', '409', '502']),
    );
    expect(operation?.responses['200']?.headers).toHaveProperty(PRICE_ATTESTATION_HEADER);
  });
  it('is sold as an MCP tool from its own declarations: priced, refused before payment, signed', async () => {
    const buyer = await fundedBuyer(stack.chain);
    const payer = new x402Client().register('eip155:*', new ExactEvmScheme(buyer.account));
    const client = new Client({ name: 'toy-product-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.service.url}/mcp`)));
    try {
      const { tools } = await client.listTools();
      const tool = tools.find(({ name }) => name === 'get_toy_word');
      expect(tool?.description).toContain('$0.004 per call');
      expect(Object.keys(tool?.inputSchema.properties ?? {})).toEqual(['word']);

      const unknown = (await client.callTool({
        name: 'get_toy_word',
        arguments: { word: 'quince' },
      })) as { isError?: boolean; structuredContent?: unknown };
      expect(unknown.isError).toBe(true);
      expect(JSON.stringify(unknown.structuredContent ?? {})).not.toContain('accepts');

      const challenge = (await client.callTool({
        name: 'get_toy_word',
        arguments: { word: 'apple' },
      })) as { isError?: boolean; structuredContent?: unknown };
      expect(challenge.isError).toBe(true);
      const required = challenge.structuredContent as PaymentRequired;
      expect(required.resource.url).toBe('mcp://tool/get_toy_word');
      expect(required.accepts.map(({ amount }) => amount)).toContain('4000');

      const before = await stack.balances();
      const paid = (await client.callTool({
        name: 'get_toy_word',
        arguments: { word: 'apple' },
        _meta: { 'x402/payment': await payer.createPaymentPayload(required) },
      })) as { isError?: boolean; structuredContent?: unknown; _meta?: Record<string, unknown> };
      expect(paid.isError).toBeFalsy();
      const body = paid.structuredContent as PricedBody;
      expect(body.price).toEqual({ apple: 1.25 });
      const attestation = paid._meta?.['x402/price-attestation'];
      expect(typeof attestation).toBe('string');
      await expect(
        attestationProblem(attestation as string, body, SIGNER),
      ).resolves.toBeUndefined();
      const after = await stack.balances();
      expect(after.payTo - before.payTo).toBe(4000n);
    } finally {
      await client.close();
    }
  });
});
