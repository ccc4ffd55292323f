import { requirementFor, startPaidApp, type PaidApp } from './support/paid-app.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { describeWithRedis } from './support/redis-suite.js';
import { startApp, type RunningApp } from './support/test-app.js';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
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

  it('still count: leaving before the 402 does not escape the limit', async () => {
    const accepted = await requirementFor(stack, '/v1/ticker/BTC');
    const unfunded = privateKeyToAccount(generatePrivateKey());
    for (let index = 0; index < 3; index += 1) {
      // a well-formed payment the facilitator refuses (no funds), abandoned while it is checked
      const payment = await signedPayment(unfunded, accepted);
      const gone = new AbortController();
      const request = stack.service.get('/v1/ticker/BTC', {
        headers: v2Header(payment),
        signal: gone.signal,
      });
      setTimeout(() => {
        gone.abort();
      }, 5);
      await expect(request).rejects.toThrow();
    }
    // the server counts each abandoned refusal when it has checked it; then the next payment
    // from that address is already over the limit
    await new Promise((resolve) => setTimeout(resolve, 300));
    const junk = { 'payment-signature': 'bm90IGEgcGF5bWVudA==' };
    const status = (await stack.service.get('/v1/ticker/BTC', { headers: junk })).status;
    expect(status).toBe(429);
  });
});

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
