import { jest } from '@jest/globals';
import { RateLimiter } from '../src/rate-limit/rate-limit.guard.js';
import { requirementFor, startPaidApp, type PaidApp } from './support/paid-app.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { describeWithRedis } from './support/redis-suite.js';
import { startApp, type RunningApp } from './support/test-app.js';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { MetricsService } from '../src/metrics/metrics.service.js';
import { parseExposition, sampleValue } from './support/prometheus.js';
import { openSocket } from './support/raw-http.js';
import { signedPayment, v2Header } from './support/x402-payloads.js';

const LIMITS = { RATE_LIMIT_FREE: '3', RATE_LIMIT_UNPAID: '2', RATE_LIMIT_WINDOW_MS: '60000' };

async function expectRateLimited(response: Response): Promise<void> {
  expect(response.status).toBe(429);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(await response.json()).toMatchObject({ status: 429, code: 'rate_limited' });
}

describe('rate limits per client address', () => {
  let stack: PaidApp;

  beforeAll(async () => {
    stack = await startPaidApp({ env: LIMITS });
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

  it('unpaid requests to paid routes: RATE_LIMIT_UNPAID 402s, then 429; a payment still buys its price', async () => {
    const accepted = await requirementFor(stack, '/v1/ticker/BTC'); // the first unpaid request
    expect((await stack.service.get('/v1/ticker/ETH')).status).toBe(402);
    await expectRateLimited(await stack.service.get('/v1/ticker/BTC'));

    const before = await stack.balances();
    const payment = await signedPayment(stack.buyer.account, accepted);
    const paid = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
    expect(paid.status).toBe(200);
    expect((await stack.balances()).payTo - before.payTo).toBe(BigInt(accepted.amount));
  });

  it('refused payments: RATE_LIMIT_UNPAID + 1 of them answered, then that address gets 429 for payments too', async () => {
    const junk = { 'payment-signature': 'bm90IGEgcGF5bWVudA==' };
    const statuses: number[] = [];
    for (let index = 0; index < 4; index += 1) {
      statuses.push((await stack.service.get('/v1/ticker/BTC', { headers: junk })).status);
    }
    expect(statuses).toEqual([400, 400, 400, 429]);
    await expectRateLimited(await stack.service.get('/v1/ticker/BTC', { headers: junk }));
  });
});

describe('refused payments whose client hangs up', () => {
  let stack: PaidApp;

  beforeAll(async () => {
    stack = await startPaidApp({ env: LIMITS });
  });

  afterAll(async () => {
    await stack.close();
  });

  it('still count: hanging up right after sending, or while the payment is checked, does not escape the limit', async () => {
    const accepted = await requirementFor(stack, '/v1/ticker/BTC'); // counted: 1 of 2 unpaid
    const unfunded = privateKeyToAccount(generatePrivateKey());
    // well-formed payments the facilitator refuses (no funds), each sent whole on its own
    // connection that closes right after sending, a little later, or once it is being checked
    for (const hangUpAfterMs of [0, 5, 50]) {
      const payment = await signedPayment(unfunded, accepted);
      await sendAndHangUp(stack.service.url, '/v1/ticker/BTC', v2Header(payment), hangUpAfterMs);
    }
    await refusalsChecked(stack, 3);
    const junk = { 'payment-signature': 'bm90IGEgcGF5bWVudA==' };
    await expectRateLimited(await stack.service.get('/v1/ticker/BTC', { headers: junk }));
  });
});

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
