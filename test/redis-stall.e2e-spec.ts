/**
 * A Redis that accepts connections but stops answering (paused, overloaded, a broken network
 * path): every command has a deadline, so nothing hangs. Liveness answers at once, readiness and
 * paid routes answer 503 `shared_state_unavailable` within the deadline and charge nothing, the
 * free list answers without its shared count; once Redis answers again, so does everything.
 */
import { REDIS_COMMAND_DEADLINE_MS } from '../src/shared-state/redis-connection.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { describeWithRedis } from './support/redis-suite.js';
import { StallingProxy } from './support/stalling-proxy.js';
import { paymentRequiredOf, signedPayment, v2Header } from './support/x402-payloads.js';

/** A request that would hang without the deadline fails the test here instead of at its time-out. */
const HANG_MS = 10_000;

describeWithRedis('a stalled Redis', () => {
  let redis: RedisServer;
  let proxy: StallingProxy;
  let stack: PaidApp;

  async function timed(
    path: string,
    init: RequestInit = {},
  ): Promise<{ response: Response; ms: number }> {
    const started = performance.now();
    const response = await stack.service.get(path, {
      ...init,
      signal: AbortSignal.timeout(HANG_MS),
    });
    await response.clone().arrayBuffer();
    return { response, ms: performance.now() - started };
  }

  async function code(response: Response): Promise<unknown> {
    return ((await response.json()) as { code?: unknown }).code;
  }

  beforeAll(async () => {
    redis = await startRedisServer();
    proxy = await StallingProxy.start(redis.port);
    stack = await startPaidApp({ env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}/0` } });
  }, 60_000);

  afterAll(async () => {
    proxy.resume();
    await stack.close();
    await proxy.close();
    await redis.stop();
  });

  it('nothing hangs while it stalls, nothing is charged, and all comes back when it answers again', async () => {
    expect((await timed('/health/ready')).response.status).toBe(200);
    const accepted = paymentRequiredOf(await stack.service.get('/v1/ticker/BTC')).accepts[0]!;
    const payment = await signedPayment(stack.buyer.account, accepted);
    const before = await stack.balances();

    proxy.stall();

    const live = await timed('/health/live');
    expect(live.response.status).toBe(200);
    expect(live.ms).toBeLessThan(REDIS_COMMAND_DEADLINE_MS);

    // readiness shares one answer a second among its probes: the one given before the stall ends
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const ready = await timed('/health/ready');
    expect(ready.response.status).toBe(503);
    expect(await code(ready.response)).toBe('shared_state_unavailable');
    expect(ready.ms).toBeLessThan(REDIS_COMMAND_DEADLINE_MS + 1500);

    const unpaid = await timed('/v1/ticker/BTC');
    expect(unpaid.response.status).toBe(503);
    expect(await code(unpaid.response)).toBe('shared_state_unavailable');
    expect(unpaid.ms).toBeLessThan(REDIS_COMMAND_DEADLINE_MS + 1500);

    const paid = await timed('/v1/ticker/BTC', { headers: v2Header(payment) });
    expect(paid.response.status).toBe(503);
    expect(await code(paid.response)).toBe('shared_state_unavailable');
    expect(paid.ms).toBeLessThan(REDIS_COMMAND_DEADLINE_MS + 1500);

    // the free list does not wait for its shared count
    const assets = await timed('/v1/assets');
    expect(assets.response.status).toBe(200);
    expect(assets.ms).toBeLessThan(REDIS_COMMAND_DEADLINE_MS);

    expect(await stack.balances()).toEqual(before);

    proxy.resume();
    for (const until = Date.now() + 15_000; ;) {
      if ((await timed('/health/ready')).response.status === 200) break;
      if (Date.now() > until) throw new Error('never ready again after Redis answered');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // the payment refused with a 503 was never used: it buys the price now
    const bought = await timed('/v1/ticker/BTC', { headers: v2Header(payment) });
    expect(bought.response.status).toBe(200);
    expect((await stack.balances()).payTo).toBe(before.payTo + BigInt(accepted.amount));
  }, 60_000);
});
