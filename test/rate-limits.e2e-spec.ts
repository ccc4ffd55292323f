import { jest } from '@jest/globals';
import type { PaymentRequirements } from '@x402/core/types';
import { RateLimiter } from '../src/rate-limit/rate-limit.guard.js';
import { requirementFor, startPaidApp, type PaidApp } from './support/paid-app.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { describeWithRedis } from './support/redis-suite.js';
import { startApp, type RunningApp } from './support/test-app.js';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { MetricsService } from '../src/metrics/metrics.service.js';
import { parseExposition, sampleValue } from './support/prometheus.js';
import { openSocket } from './support/raw-http.js';
import { RpcProxy } from './support/rpc-proxy.js';
import { paymentRequiredOf, signedPayment, v2Header } from './support/x402-payloads.js';

const LIMITS = { RATE_LIMIT_FREE: '3', RATE_LIMIT_UNPAID: '2', RATE_LIMIT_WINDOW_MS: '60000' };

async function expectRateLimited(response: Response): Promise<void> {
  expect(response.status).toBe(429);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(await response.json()).toMatchObject({ status: 429, code: 'rate_limited' });
}

/** A request as the proxy at 127.0.0.1 (TRUST_PROXY) forwards it for `client`. */
function from(client: string, headers: Record<string, string> = {}): RequestInit {
  return { headers: { ...headers, 'x-forwarded-for': client } };
}

/** The first requirement a paid route offers `client`, read from its 402 (counted as one). */
async function requirementFrom(
  stack: PaidApp,
  path: string,
  client: string,
): Promise<PaymentRequirements> {
  const challenge = await stack.service.get(path, from(client));
  expect(challenge.status).toBe(402);
  const accepted = paymentRequiredOf(challenge).accepts[0];
  if (accepted === undefined) throw new Error('402 without requirements');
  return accepted;
}

const JUNK_PAYMENT = { 'payment-signature': 'bm90IGEgcGF5bWVudA==' };

describe('rate limits per client address', () => {
  let stack: PaidApp;

  beforeAll(async () => {
    stack = await startPaidApp({ env: { ...LIMITS, TRUST_PROXY: '127.0.0.1' } });
  });

  afterAll(async () => {
    await stack.close();
  });

  it('free routes: RATE_LIMIT_FREE requests per window, then 429 with Retry-After', async () => {
    for (let index = 0; index < 3; index += 1) {
      expect((await stack.service.get('/v1/assets')).status).toBe(200);
    }
    await expectRateLimited(await stack.service.get('/v1/assets'));
  });

  it('a client that pays each 402 it gets is never limited: each sale gives its 402 back', async () => {
    const client = '203.0.113.1';
    const before = await stack.balances();
    let spent = 0n;
    for (let round = 0; round < 5; round += 1) {
      const accepted = await requirementFrom(stack, '/v1/ticker/BTC', client);
      const payment = await signedPayment(stack.buyer.account, accepted);
      const paid = await stack.service.get('/v1/ticker/BTC', from(client, v2Header(payment)));
      expect(paid.status).toBe(200);
      await paid.arrayBuffer();
      spent += BigInt(accepted.amount);
    }
    expect((await stack.balances()).payTo - before.payTo).toBe(spent);
  });

  it('unpaid requests to paid routes: RATE_LIMIT_UNPAID 402s, then 429 for all the address sends there, payments included', async () => {
    const client = '203.0.113.2';
    const accepted = await requirementFrom(stack, '/v1/ticker/BTC', client);
    expect((await stack.service.get('/v1/ticker/ETH', from(client))).status).toBe(402);
    await expectRateLimited(await stack.service.get('/v1/ticker/BTC', from(client)));

    // refused before it is looked at: nothing is charged
    const before = await stack.balances();
    const payment = await signedPayment(stack.buyer.account, accepted);
    await expectRateLimited(
      await stack.service.get('/v1/ticker/BTC', from(client, v2Header(payment))),
    );
    // a payment header does not buy answers the limit would refuse, a 404 included
    await expectRateLimited(
      await stack.service.get('/v1/ticker/NOTACOIN', from(client, { 'x-payment': 'junk' })),
    );
    expect((await stack.balances()).payTo).toBe(before.payTo);
    // another client behind the same proxy still gets its 402
    expect((await stack.service.get('/v1/ticker/BTC', from('203.0.113.3'))).status).toBe(402);
  });

  it('refused payments: counted like unpaid requests, RATE_LIMIT_UNPAID + 1 answered, then 429', async () => {
    const client = '203.0.113.4';
    const statuses: number[] = [];
    for (let index = 0; index < 4; index += 1) {
      const response = await stack.service.get('/v1/ticker/BTC', from(client, JUNK_PAYMENT));
      statuses.push(response.status);
    }
    expect(statuses).toEqual([400, 400, 400, 429]);
    await expectRateLimited(await stack.service.get('/v1/ticker/BTC', from(client, JUNK_PAYMENT)));
  });

  it('a sale gives no credit ahead: sales without a 402 leave the unpaid count where it was', async () => {
    const client = '203.0.113.5';
    const accepted = await requirementFrom(stack, '/v1/ticker/BTC', '203.0.113.6');
    for (let round = 0; round < 3; round += 1) {
      const payment = await signedPayment(stack.buyer.account, accepted);
      const paid = await stack.service.get('/v1/ticker/BTC', from(client, v2Header(payment)));
      expect(paid.status).toBe(200);
      await paid.arrayBuffer();
    }
    expect((await stack.service.get('/v1/ticker/BTC', from(client))).status).toBe(402);
    expect((await stack.service.get('/v1/ticker/BTC', from(client))).status).toBe(402);
    await expectRateLimited(await stack.service.get('/v1/ticker/BTC', from(client)));
  });
});

describe('rate limits with the default settings', () => {
  let stack: PaidApp;

  beforeAll(async () => {
    stack = await startPaidApp();
  });

  afterAll(async () => {
    await stack.close();
  });

  it('500 unpaid requests in a minute: RATE_LIMIT_UNPAID (120) 402s, then 429s; then a junk payment header gets 429 too, on a 404 as on a price', async () => {
    const junk = { 'x-payment': 'junk' };
    // not limited yet: the undecodable payment's 400, before the symbol is looked at (counted,
    // as it bought nothing)
    expect((await stack.service.get('/v1/ticker/NOTACOIN', { headers: junk })).status).toBe(400);
    const statuses: Record<number, number> = {};
    const started = Date.now();
    for (let index = 0; index < 500; index += 1) {
      const response = await stack.service.get('/v1/ticker/BTC');
      await response.arrayBuffer();
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    }
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(statuses).toEqual({ 402: 119, 429: 381 });
    await expectRateLimited(await stack.service.get('/v1/ticker/BTC'));
    await expectRateLimited(await stack.service.get('/v1/ticker/NOTACOIN', { headers: junk }));
    await expectRateLimited(await stack.service.get('/v1/ticker/BTC', { headers: junk }));
  });
});

describe('refused payments whose client hangs up', () => {
  let stack: PaidApp;

  beforeAll(async () => {
    // room for the 402 and the three hang-ups, so each of them is checked before the limit bites
    stack = await startPaidApp({ env: { ...LIMITS, RATE_LIMIT_UNPAID: '4' } });
  });

  afterAll(async () => {
    await stack.close();
  });

  it('still count: hanging up right after sending, or while the payment is checked, does not escape the limit', async () => {
    const accepted = await requirementFor(stack, '/v1/ticker/BTC'); // counted: 1 of 4
    const unfunded = privateKeyToAccount(generatePrivateKey());
    // well-formed payments the facilitator refuses (no funds), each sent whole on its own
    // connection that closes right after sending, a little later, or once it is being checked
    for (const hangUpAfterMs of [0, 5, 50]) {
      const payment = await signedPayment(unfunded, accepted);
      await sendAndHangUp(stack.service.url, '/v1/ticker/BTC', v2Header(payment), hangUpAfterMs);
    }
    await refusalsChecked(stack, 3);
    // 4 of 4 counted: one more is answered, the next is over the limit
    expect((await stack.service.get('/v1/ticker/BTC', { headers: JUNK_PAYMENT })).status).toBe(400);
    await expectRateLimited(await stack.service.get('/v1/ticker/BTC', { headers: JUNK_PAYMENT }));
  });
});

describe('valid payments whose client hangs up while the payment is checked', () => {
  let stack: PaidApp;
  let rpc: RpcProxy;

  beforeAll(async () => {
    stack = await startPaidApp({
      env: LIMITS,
      beforeApp: async (chain) => {
        rpc = await RpcProxy.start(chain.rpcUrl);
        return { X402_RPC_URL: rpc.url };
      },
    });
  });

  afterAll(async () => {
    await stack.close();
    await rpc.close();
  });

  it('stay counted: one funded payment sent again and again, each connection reset mid-check, is verified at most the limit allows, then 429', async () => {
    const accepted = await requirementFor(stack, '/v1/ticker/BTC'); // counted: 1 of 2
    const before = await stack.balances();
    const payment = await signedPayment(stack.buyer.account, accepted);
    // every check of the payment takes 300 ms on the chain: each client is gone before it ends
    rpc.fail('eth_call', { kind: 'delay', ms: 300 });
    for (let round = 0; round < 8; round += 1) {
      await sendAndHangUp(stack.service.url, '/v1/ticker/BTC', v2Header(payment), 60);
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    rpc.clear();
    // the 402 and two payments fill RATE_LIMIT_UNPAID + 1; the rest were refused on arrival
    expect(await paymentsVerified(stack)).toBeLessThanOrEqual(2);
    await expectRateLimited(await stack.service.get('/v1/ticker/BTC'));
    expect((await stack.balances()).payTo).toBe(before.payTo);
  });
});

/** How many payments the app verified (its own metrics say so). */
async function paymentsVerified(stack: PaidApp): Promise<number> {
  const samples = parseExposition(await stack.service.app.get(MetricsService).registry.metrics());
  return sampleValue(samples, 'x402_payments_total', { outcome: 'verified' });
}

/** Writes a whole GET on a fresh connection, then closes it `afterMs` later without reading. */
async function sendAndHangUp(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
  afterMs: number,
): Promise<void> {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  const socket = openSocket(baseUrl);
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => {
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines.join('')}\r\n`, () => {
      resolve();
    });
  });
  await new Promise((resolve) => setTimeout(resolve, afterMs));
  socket.destroy();
}

/** Waits until the app has checked and refused `count` payments (its own metrics say so). */
async function refusalsChecked(stack: PaidApp, count: number): Promise<void> {
  const registry = stack.service.app.get(MetricsService).registry;
  for (let waited = 0; waited < 10_000; waited += 20) {
    const samples = parseExposition(await registry.metrics());
    if (sampleValue(samples, 'x402_payments_total', { outcome: 'refused' }) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the app did not refuse ${String(count)} payments within 10 s`);
}

describeWithRedis('rate limits shared by instances (REDIS_URL)', () => {
  let redis: RedisServer;
  const instances: RunningApp[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    for (const key of ['11', '22']) {
      instances.push(
        await startApp({
          ...LIMITS,
          REDIS_URL: redis.url,
          X402_SETTLER_PRIVATE_KEY: `0x${key.repeat(32)}`,
        }),
      );
    }
  });

  afterAll(async () => {
    for (const instance of instances) await instance.close();
    await redis.stop();
  });

  it('counts a client across instances', async () => {
    expect((await instances[0]!.get('/v1/assets')).status).toBe(200);
    expect((await instances[1]!.get('/v1/assets')).status).toBe(200);
    expect((await instances[0]!.get('/v1/assets')).status).toBe(200);
    await expectRateLimited(await instances[1]!.get('/v1/assets'));
  });
});

describe('the asset list behind a trusted proxy', () => {
  let app: RunningApp;

  beforeAll(async () => {
    app = await startApp({ ...LIMITS, TRUST_PROXY: '127.0.0.1' });
  });

  afterAll(async () => {
    await app.close();
  });

  it('is counted once per request, per client as X-Forwarded-For names it', async () => {
    const verdicts = jest.spyOn(app.app.get(RateLimiter), 'verdict');
    const from = (client: string): RequestInit => ({ headers: { 'x-forwarded-for': client } });
    for (let index = 0; index < 3; index += 1) {
      expect((await app.get('/v1/assets', from('203.0.113.7'))).status).toBe(200);
    }
    expect(verdicts).toHaveBeenCalledTimes(3);
    for (const [request] of verdicts.mock.calls) expect(request.ip).toBe('203.0.113.7');
    await expectRateLimited(await app.get('/v1/assets', from('203.0.113.7')));
    // another client behind the same proxy has its own count
    expect((await app.get('/v1/assets', from('203.0.113.8'))).status).toBe(200);
    verdicts.mockRestore();
  });
});
