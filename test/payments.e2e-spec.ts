import { decodePaymentResponseHeader } from '@x402/fetch';
import { x402Client } from '@x402/core/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { EmbeddedFacilitatorClient } from '../src/payments/facilitator/embedded-facilitator.js';
import { EVERY_EMBEDDED_SCHEME } from './support/embedded-schemes.js';
import { TickersController } from '../src/tickers/tickers.controller.js';
import { FacilitatorServer } from './support/facilitator-server.js';
import type { Mock } from 'jest-mock';
import { spyOnHandler } from './support/handler-spy.js';
import { startRedisServer } from './support/redis-server.js';
import { describeWithRedis } from './support/redis-suite.js';
import { requirementFor, responseJson, startPaidApp, type PaidApp } from './support/paid-app.js';
import { paymentRequiredOf, signedPayment, v1Header, v2Header } from './support/x402-payloads.js';

const PRICES = [
  ['getTicker', '/v1/ticker/BTC', 2000n],
  ['getTickers', '/v1/tickers/BTC,ETH,SOL', 8000n],
  ['getAllTickers', '/v1/all-tickers', 10000n],
] as const;

describe('x402 paywall, in-memory ledger', () => {
  paywallSuite(() => Promise.resolve({ env: {}, stop: () => Promise.resolve() }));
});

describeWithRedis('x402 paywall, Redis ledger (REDIS_URL)', () => {
  paywallSuite(async () => {
    const redis = await startRedisServer();
    return { env: { REDIS_URL: redis.url }, stop: () => redis.stop() };
  });
});

/** The whole paywall, against whichever store `store` starts for the ledger. */
function paywallSuite(
  store: () => Promise<{ env: Record<string, string>; stop: () => Promise<void> }>,
): void {
  let stack: PaidApp;
  let stopStore: () => Promise<void>;
  let handler: Mock<TickersController['getTicker']>;
  let originalGetTicker: TickersController['getTicker'];

  beforeAll(async () => {
    ({ spy: handler, original: originalGetTicker } = spyOnHandler<TickersController['getTicker']>(
      TickersController.prototype,
      'getTicker',
    ));
    const { env, stop } = await store();
    stopStore = stop;
    stack = await startPaidApp({ env });
  });

  afterAll(async () => {
    await stack.close();
    await stopStore();
    handler.mockRestore();
  });

  describe('the 402 challenge', () => {
    it('carries the v2 header and a v1 body for the same requirements', async () => {
      const response = await stack.service.get('/v1/ticker/BTC');
      expect(response.status).toBe(402);
      const v2 = paymentRequiredOf(response);
      const v1 = await responseJson(response);
      expect(v2).toMatchObject({
        x402Version: 2,
        error: 'Payment required',
        resource: { url: `${stack.service.url}/v1/ticker/BTC`, mimeType: 'application/json' },
        accepts: [
          {
            scheme: 'exact',
            network: 'eip155:84532',
            amount: '2000',
            asset: stack.chain.usdcAddress,
            payTo: stack.payTo,
            maxTimeoutSeconds: 60,
            extra: { name: 'USDC', version: '2' },
          },
          {
            scheme: 'batch-settlement',
            network: 'eip155:84532',
            amount: '2000',
            asset: stack.chain.usdcAddress,
            payTo: stack.payTo,
            maxTimeoutSeconds: 60,
            extra: { name: 'USDC', version: '2', withdrawDelay: 900 },
          },
        ],
      });
      expect(v1).toMatchObject({
        x402Version: 1,
        error: 'Payment required',
        accepts: [
          {
            scheme: 'exact',
            network: 'base-sepolia',
            maxAmountRequired: '2000',
            resource: `${stack.service.url}/v1/ticker/BTC`,
            payTo: stack.payTo,
            asset: stack.chain.usdcAddress,
            extra: { name: 'USDC', version: '2' },
          },
        ],
      });
    });

    it('declares the bazaar and payment-identifier extensions with input and output schemas', async () => {
      const { extensions } = paymentRequiredOf(await stack.service.get('/v1/tickers/BTC,ETH'));
      expect(extensions).toMatchObject({
        bazaar: {
          info: {
            input: { type: 'http', method: 'GET', pathParams: { symbols: 'BTC,ETH' } },
            output: { type: 'json', example: { currency: 'USD' } },
          },
          schema: {
            properties: {
              input: expect.any(Object) as object,
              output: expect.any(Object) as object,
            },
          },
        },
        'payment-identifier': { info: { required: false } },
      });
    });

    it('lets browsers send payment headers and read the x402 ones (CORS)', async () => {
      const preflight = await stack.service.get('/v1/ticker/BTC', {
        method: 'OPTIONS',
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': 'GET',
          'access-control-request-headers':
            'payment-signature,x-payment,access-control-expose-headers',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/PAYMENT-SIGNATURE/);
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/X-PAYMENT/);
      const challenge = await stack.service.get('/v1/ticker/BTC', {
        headers: { origin: 'https://app.example' },
      });
      expect(challenge.headers.get('access-control-expose-headers')).toMatch(/PAYMENT-REQUIRED/);
      expect(challenge.headers.get('access-control-expose-headers')).toMatch(/X-PAYMENT-RESPONSE/);
    });
  });

  describe.each([
    ['@x402/fetch (v2)', 'fetchV2', 'payment-response', 'eip155:84532'],
    ['x402-fetch (v1)', 'fetchV1', 'x-payment-response', 'base-sepolia'],
  ] as const)('bought with %s', (_client, fetcher, receiptHeader, network) => {
    it.each(PRICES)(
      '%s moves exactly its price to X402_PAY_TO',
      async (_operation, path, price) => {
        const before = await stack.balances();
        const response = await stack.buyer[fetcher](`${stack.service.url}${path}`);
        expect(response.status).toBe(200);
        const receipt = decodePaymentResponseHeader(response.headers.get(receiptHeader) ?? '');
        expect(receipt).toMatchObject({
          success: true,
          network,
          payer: stack.buyer.account.address,
        });
        expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
        expect(await stack.balances()).toEqual({
          buyer: before.buyer - price,
          payTo: before.payTo + price,
        });
      },
    );
  });

  it('charges nothing for the free route', async () => {
    const before = await stack.balances();
    const response = await stack.buyer.fetchV2(`${stack.service.url}/v1/assets`);
    expect(response.status).toBe(200);
    expect(response.headers.get('payment-response')).toBeNull();
    expect(await stack.balances()).toEqual(before);
  });

  describe('a payment presented again', () => {
    it('is refused after it settled, in either header, without running the handler', async () => {
      const accepted = await requirementFor(stack, '/v1/ticker/BTC');
      const payment = await signedPayment(stack.buyer.account, accepted);
      expect(
        (await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) })).status,
      ).toBe(200);
      const afterFirst = await stack.balances();
      const calls = handler.mock.calls.length;
      for (const headers of [v2Header(payment), v1Header(payment)]) {
        const replay = await stack.service.get('/v1/ticker/BTC', { headers });
        expect(replay.status).toBe(402);
        expect((await responseJson(replay)).error).toMatch(/^payment_already_used/);
      }
      expect(handler.mock.calls.length).toBe(calls);
      expect(await stack.balances()).toEqual(afterFirst);
    });

    it('20 times at once: one 200, one transfer, the handler ran once', async () => {
      const accepted = await requirementFor(stack, '/v1/ticker/ETH');
      const payment = await signedPayment(stack.buyer.account, accepted);
      const before = await stack.balances();
      const calls = handler.mock.calls.length;
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_unused, index) =>
          stack.service.get('/v1/ticker/ETH', {
            headers: index % 2 === 0 ? v2Header(payment) : v1Header(payment),
          }),
        ),
      );
      const statuses = responses.map((response) => response.status);
      expect(statuses.filter((status) => status === 200)).toHaveLength(1);
      expect(statuses.filter((status) => status === 402)).toHaveLength(19);
      for (const response of responses.filter((candidate) => candidate.status === 402)) {
        expect((await responseJson(response)).error).toMatch(/^payment_(in_progress|already_used)/);
      }
      expect(handler.mock.calls.length - calls).toBe(1);
      expect(await stack.balances()).toEqual({
        buyer: before.buyer - 2000n,
        payTo: before.payTo + 2000n,
      });
    });
  });

  it('the same authorization in another letter case is the same payment', async () => {
    const accepted = await requirementFor(stack, '/v1/ticker/LTC');
    const payment = await signedPayment(stack.buyer.account, accepted);
    const authorization = payment.payload.authorization as Record<string, string>;
    const recased = {
      ...payment,
      accepted: { ...accepted, payTo: accepted.payTo.toLowerCase() },
      payload: {
        ...payment.payload,
        authorization: { ...authorization, from: authorization.from!.toLowerCase() },
      },
    };
    const before = await stack.balances();
    const calls = handler.mock.calls.length;
    const responses = await Promise.all(
      [payment, recased, payment, recased].map((copy) =>
        stack.service.get('/v1/ticker/LTC', { headers: v2Header(copy) }),
      ),
    );
    expect(responses.filter((response) => response.status === 200)).toHaveLength(1);
    expect(handler.mock.calls.length - calls).toBe(1);
    expect(await stack.balances()).toEqual({
      buyer: before.buyer - 2000n,
      payTo: before.payTo + 2000n,
    });
  });

  it('another spelling of the signed part (extra fields, a padded value) is refused as malformed', async () => {
    const accepted = await requirementFor(stack, '/v1/ticker/LTC');
    const payment = await signedPayment(stack.buyer.account, accepted);
    const authorization = payment.payload.authorization as Record<string, string>;
    const before = await stack.balances();
    for (const payload of [
      { ...payment.payload, extra: 'noise' },
      {
        ...payment.payload,
        authorization: { ...authorization, value: `0${authorization.value!}` },
      },
    ]) {
      for (const headers of [
        v2Header({ ...payment, payload }),
        v1Header({ ...payment, payload }),
      ]) {
        const response = await stack.service.get('/v1/ticker/LTC', { headers });
        expect(response.status).toBe(400);
        expect(await responseJson(response)).toMatchObject({ code: 'invalid_payment' });
      }
    }
    expect(await stack.balances()).toEqual(before);
  });

  it('HEAD on a paid route sells nothing and does not fail', async () => {
    const before = await stack.balances();
    const response = await stack.service.get('/v1/ticker/BTC', { method: 'HEAD' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET');
    expect(await stack.balances()).toEqual(before);
  });

  it('a URL the server cannot decode is a problem+json 400', async () => {
    const response = await stack.service.get('/v1/ticker/%ZZ');
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/problem\+json/);
  });

  describe('payment-identifier', () => {
    async function identifiedPayment(id: string): Promise<PaymentPayload> {
      const required = paymentRequiredOf(await stack.service.get('/v1/ticker/SOL'));
      const client = new x402Client().register('eip155:*', new ExactEvmScheme(stack.buyer.account));
      const payload = await client.createPaymentPayload(required);
      return {
        ...payload,
        extensions: appendPaymentIdentifierToExtensions(
          structuredClone(required.extensions ?? {}),
          id,
        ),
      };
    }

    it('same id and payment: the stored response again, no new charge', async () => {
      const id = `order_${Date.now()}_retry-safe`;
      const payment = await identifiedPayment(id);
      const first = await stack.service.get('/v1/ticker/SOL', { headers: v2Header(payment) });
      expect(first.status).toBe(200);
      const firstBody = await responseJson(first);
      const afterFirst = await stack.balances();
      const again = await stack.service.get('/v1/ticker/SOL', { headers: v2Header(payment) });
      expect(again.status).toBe(200);
      expect(await responseJson(again)).toEqual(firstBody);
      expect(again.headers.get('payment-response')).toBe(first.headers.get('payment-response'));
      expect(await stack.balances()).toEqual(afterFirst);
    });

    it('same id and another payment: 409, nothing charged', async () => {
      const id = `order_${Date.now()}_conflicting`;
      expect(
        (
          await stack.service.get('/v1/ticker/SOL', {
            headers: v2Header(await identifiedPayment(id)),
          })
        ).status,
      ).toBe(200);
      const before = await stack.balances();
      const other = await stack.service.get('/v1/ticker/SOL', {
        headers: v2Header(await identifiedPayment(id)),
      });
      expect(other.status).toBe(409);
      expect(await responseJson(other)).toMatchObject({ code: 'payment_id_conflict' });
      expect(await stack.balances()).toEqual(before);
    });

    it('same id and payment for another resource: 409', async () => {
      const id = `order_${Date.now()}_other-resource`;
      const payment = await identifiedPayment(id);
      expect(
        (await stack.service.get('/v1/ticker/SOL', { headers: v2Header(payment) })).status,
      ).toBe(200);
      const elsewhere = await stack.service.get('/v1/ticker/sol', { headers: v2Header(payment) });
      expect(elsewhere.status).toBe(409);
    });

    it('a malformed id is a 400', async () => {
      const payment = await identifiedPayment('0123456789abcdef');
      const bad = {
        ...payment,
        extensions: { 'payment-identifier': { info: { required: false, id: 'short' } } },
      };
      const response = await stack.service.get('/v1/ticker/SOL', { headers: v2Header(bad) });
      expect(response.status).toBe(400);
      expect(await responseJson(response)).toMatchObject({ code: 'invalid_payment' });
    });
  });

  describe('refused payments move nothing and never answer 500', () => {
    const stranger = privateKeyToAccount(generatePrivateKey());

    it.each([
      ['underpaid', (a: PaymentRequirements) => ({ value: BigInt(a.amount) - 1n }), /value/],
      ['overpaid', (a: PaymentRequirements) => ({ value: BigInt(a.amount) + 1n }), /value/],
      [
        'paid to the wrong recipient',
        () => ({ to: '0x000000000000000000000000000000000000dEaD' as const }),
        /recipient/,
      ],
      [
        'expired',
        () => ({ validBefore: BigInt(Math.floor(Date.now() / 1000) - 10) }),
        /valid_before|expired/,
      ],
      [
        'not yet valid',
        () => ({ validAfter: BigInt(Math.floor(Date.now() / 1000) + 3600) }),
        /valid_after|not.*valid/,
      ],
      ['signed by someone else', () => ({ signer: stranger }), /signature/],
      ['signed for another token', () => ({ domain: { name: 'USD Coin' } }), /signature|name/],
      ['signed for another chain', () => ({ domain: { chainId: 8453 } }), /signature/],
    ] as const)('%s → 402 with a reason', async (_case, overrides, reason) => {
      const accepted = await requirementFor(stack, '/v1/ticker/BTC');
      const payment = await signedPayment(stack.buyer.account, accepted, overrides(accepted));
      const before = await stack.balances();
      for (const headers of [v2Header(payment), v1Header(payment)]) {
        const response = await stack.service.get('/v1/ticker/BTC', { headers });
        expect(response.status).toBe(402);
        expect((await responseJson(response)).error).toMatch(reason);
      }
      expect(await stack.balances()).toEqual(before);
    });

    it('insufficient balance → 402 with a reason', async () => {
      const broke = privateKeyToAccount(generatePrivateKey());
      const payment = await signedPayment(broke, await requirementFor(stack, '/v1/ticker/BTC'));
      const response = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
      expect(response.status).toBe(402);
      expect((await responseJson(response)).error).toMatch(/insufficient_balance/);
    });

    it.each([
      ['wrong asset', { asset: '0x0000000000000000000000000000000000000001' }],
      ['wrong network', { network: 'eip155:8453' }],
      ['wrong amount', { amount: '1' }],
    ] as const)(
      'a payment for requirements this route does not sell (%s) → 402',
      async (_case, change) => {
        const accepted = { ...(await requirementFor(stack, '/v1/ticker/BTC')), ...change };
        const payment = await signedPayment(stack.buyer.account, accepted);
        const before = await stack.balances();
        const response = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
        expect(response.status).toBe(402);
        expect((await responseJson(response)).error).toBeTruthy();
        expect(await stack.balances()).toEqual(before);
      },
    );

    it('a v1 payment for a network this route does not sell → 400', async () => {
      const payment = await signedPayment(
        stack.buyer.account,
        await requirementFor(stack, '/v1/ticker/BTC'),
      );
      const response = await stack.service.get('/v1/ticker/BTC', {
        headers: v1Header(payment, 'base'),
      });
      expect(response.status).toBe(400);
      expect(await responseJson(response)).toMatchObject({ code: 'invalid_payment' });
    });

    it('a payment whose signed part is malformed → 400, in either header', async () => {
      const accepted = await requirementFor(stack, '/v1/ticker/BTC');
      const payment = await signedPayment(stack.buyer.account, accepted);
      for (const broken of [{}, { ...payment.payload, signature: 'nope' }]) {
        for (const headers of [
          v2Header({ ...payment, payload: broken }),
          v1Header({ ...payment, payload: broken }),
        ]) {
          const response = await stack.service.get('/v1/ticker/BTC', { headers });
          expect(response.status).toBe(400);
          expect(await responseJson(response)).toMatchObject({ code: 'invalid_payment' });
        }
      }
    });

    it.each([
      ['PAYMENT-SIGNATURE', 'not base64 at all!'],
      ['PAYMENT-SIGNATURE', Buffer.from('not json').toString('base64')],
      ['PAYMENT-SIGNATURE', Buffer.from('[1,2,3]').toString('base64')],
      ['PAYMENT-SIGNATURE', Buffer.from('{"x402Version":1}').toString('base64')],
      [
        'PAYMENT-SIGNATURE',
        Buffer.from('{"x402Version":2,"accepted":"x","payload":{}}').toString('base64'),
      ],
      ['PAYMENT-SIGNATURE', 'A'.repeat(9000)],
      ['X-PAYMENT', 'garbage'],
      ['X-PAYMENT', Buffer.from('{"x402Version":1,"scheme":"exact"}').toString('base64')],
      ['X-PAYMENT', ' '],
    ])('a malformed %s header → 400 invalid_payment', async (header, value) => {
      const before = await stack.balances();
      const response = await stack.service.get('/v1/ticker/BTC', { headers: { [header]: value } });
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/problem\+json/);
      expect(await responseJson(response)).toMatchObject({ code: 'invalid_payment' });
      expect(await stack.balances()).toEqual(before);
    });

    it('a header too large for the server → 431, nothing moved', async () => {
      const response = await stack.service.get('/v1/ticker/BTC', {
        headers: { 'PAYMENT-SIGNATURE': 'A'.repeat(70_000) },
      });
      expect(response.status).toBe(431);
    });

    it('validation still comes first: a bad symbol with a valid payment is a free 400', async () => {
      const payment = await signedPayment(
        stack.buyer.account,
        await requirementFor(stack, '/v1/ticker/BTC'),
      );
      const before = await stack.balances();
      const response = await stack.service.get('/v1/ticker/BT-C', { headers: v2Header(payment) });
      expect(response.status).toBe(400);
      expect(await stack.balances()).toEqual(before);
      expect(
        (await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) })).status,
      ).toBe(200);
    });
  });

  describe('failures after verification', () => {
    it('a handler error settles nothing, and the same payment can be used again', async () => {
      const accepted = await requirementFor(stack, '/v1/ticker/BTC');
      const payment = await signedPayment(stack.buyer.account, accepted);
      const before = await stack.balances();
      handler.mockImplementationOnce(() => {
        throw new Error('boom');
      });
      const failed = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
      expect(failed.status).toBe(500);
      expect(await responseJson(failed)).toMatchObject({ code: 'internal_error' });
      expect(failed.headers.get('payment-response')).toBeNull();
      expect(await stack.balances()).toEqual(before);
      const retried = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
      expect(retried.status).toBe(200);
      expect(await stack.balances()).toEqual({
        buyer: before.buyer - 2000n,
        payTo: before.payTo + 2000n,
      });
    });

    it('a failed settlement answers 402 with the reason and withholds the body', async () => {
      const accepted = await requirementFor(stack, '/v1/ticker/BTC');
      const payment = await signedPayment(stack.buyer.account, accepted);
      const drain = await signedPayment(stack.buyer.account, {
        ...accepted,
        payTo: '0x000000000000000000000000000000000000dEaD',
        amount: (await stack.chain.usdcBalance(stack.buyer.account.address)).toString(),
      });
      const facilitator = new EmbeddedFacilitatorClient(
        stack.chain.accounts[2]!,
        stack.chain.rpcUrl,
        'eip155:84532',
        EVERY_EMBEDDED_SCHEME,
        { receiptMaxWaitMs: 20 },
      );
      // While the handler runs, the buyer's whole balance leaves through another authorization.
      handler.mockImplementationOnce(function (this: TickersController, quotes) {
        const served = originalGetTicker.call(this, quotes);
        return facilitator.settle(drain, drain.accepted).then((settled) => {
          expect(settled.success).toBe(true);
          return served;
        }) as unknown as ReturnType<TickersController['getTicker']>;
      });
      const payToBefore = await stack.chain.usdcBalance(stack.payTo);
      const response = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
      expect(response.status).toBe(402);
      const refused = await responseJson(response);
      expect(refused.error).toMatch(/^settlement_failed: .*balance/);
      expect(refused).not.toHaveProperty('price');
      expect(
        decodePaymentResponseHeader(response.headers.get('payment-response') ?? ''),
      ).toMatchObject({ success: false });
      expect(await stack.chain.usdcBalance(stack.payTo)).toBe(payToBefore);
      await stack.chain.mintUsdc(stack.buyer.account.address, 10_000_000n);
    });
  });
}

describe('remote facilitator', () => {
  let stack: PaidApp;
  let facilitator: FacilitatorServer;

  beforeAll(async () => {
    stack = await startPaidApp({
      env: { X402_FACILITATOR: 'remote', X402_FACILITATOR_TIMEOUT_MS: '1000' },
      beforeApp: async (chain) => {
        facilitator = await FacilitatorServer.start(
          new EmbeddedFacilitatorClient(
            chain.accounts[0]!,
            chain.rpcUrl,
            'eip155:84532',
            EVERY_EMBEDDED_SCHEME,
            {
              receiptMaxWaitMs: 20,
            },
          ),
        );
        return { X402_FACILITATOR_URL: facilitator.url };
      },
    });
  });

  afterAll(async () => {
    await stack.close();
    await facilitator.close();
  });

  it('buys through the facilitator HTTP API', async () => {
    const before = await stack.balances();
    const response = await stack.buyer.fetchV2(`${stack.service.url}/v1/ticker/BTC`);
    expect(response.status).toBe(200);
    expect(facilitator.calls).toEqual(
      expect.arrayContaining(['GET /supported', 'POST /verify', 'POST /settle']),
    );
    expect(await stack.balances()).toEqual({
      buyer: before.buyer - 2000n,
      payTo: before.payTo + 2000n,
    });
  });

  it.each(['error-page', 'hang', 'refuse'] as const)(
    'facilitator %s during settlement → 502 settlement_unknown, and the payment is never accepted again',
    async (mode) => {
      const accepted = await requirementFor(stack, '/v1/ticker/ETH');
      const payment = await signedPayment(stack.buyer.account, accepted);
      facilitator.mode = mode;
      facilitator.scope = 'settle';
      try {
        const response = await stack.service.get('/v1/ticker/ETH', { headers: v2Header(payment) });
        expect(response.status).toBe(502);
        expect(await responseJson(response)).toMatchObject({ code: 'settlement_unknown' });
      } finally {
        facilitator.mode = 'up';
        facilitator.scope = 'all';
      }
      const again = await stack.service.get('/v1/ticker/ETH', { headers: v2Header(payment) });
      // Not a 402: that would invite an automatic client to pay a second time.
      expect(again.status).toBe(502);
      expect(again.headers.get('retry-after')).toBe('5');
      expect(await responseJson(again)).toMatchObject({
        code: 'settlement_unknown',
        detail: expect.stringMatching(/^payment_outcome_unknown/) as string,
      });
    },
  );

  it.each(['error-page', 'hang', 'refuse'] as const)(
    'facilitator %s → 503 facilitator_unavailable, nothing moved, the payment still usable',
    async (mode) => {
      const accepted = await requirementFor(stack, '/v1/ticker/BTC');
      const payment = await signedPayment(stack.buyer.account, accepted);
      const before = await stack.balances();
      facilitator.mode = mode;
      try {
        const response = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
        expect(response.status).toBe(503);
        expect(response.headers.get('retry-after')).toBe('5');
        expect(await responseJson(response)).toMatchObject({ code: 'facilitator_unavailable' });
        expect(await stack.balances()).toEqual(before);
      } finally {
        facilitator.mode = 'up';
      }
      expect(
        (await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) })).status,
      ).toBe(200);
    },
  );
});

describe('embedded facilitator with its chain unreachable', () => {
  it('answers 503 facilitator_unavailable, not a verdict on the payment', async () => {
    const stack = await startPaidApp();
    const accepted = await requirementFor(stack, '/v1/ticker/BTC');
    const payment = await signedPayment(stack.buyer.account, accepted);
    await stack.chain.stop();
    try {
      const response = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
      expect(response.status).toBe(503);
      expect(await responseJson(response)).toMatchObject({ code: 'facilitator_unavailable' });
    } finally {
      await stack.close();
    }
  });
});
