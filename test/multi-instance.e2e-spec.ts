/**
 * Several instances behind one address, as one service: three real Nest applications on their
 * own loopback ports, sharing one redis-server (REDIS_URL) and one anvil chain, each settling
 * with its own key. Real HTTP, real settlements, transfers counted on chain.
 */
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import type { PaymentPayload } from '@x402/core/types';
import { SNAPSHOT_STORE, type SnapshotStore } from '../src/aggregation/snapshot-store.js';
import { startLocalChain, type LocalChain } from './support/chain.js';
import { FakeMarkets } from './support/fake-markets.js';
import { fundedBuyer, USDC, type Buyer } from './support/paying-clients.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { describeWithRedis } from './support/redis-suite.js';
import { startApp, type RunningApp } from './support/test-app.js';
import { paymentRequiredOf, signedPayment, v2Header } from './support/x402-payloads.js';

const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as const;
const TICKER_PRICE = 2000n;

describeWithRedis('several instances sharing Redis', () => {
  let redis: RedisServer;
  let chain: LocalChain;
  let markets: FakeMarkets;
  let buyer: Buyer;
  const instances: RunningApp[] = [];

  /** The environment of instance `index`: its own settlement key, everything else shared. */
  function envOf(index: number, extra: Record<string, string> = {}): Record<string, string> {
    return {
      ...markets.env(),
      X402_FACILITATOR: 'embedded',
      X402_NETWORK: 'base-sepolia',
      X402_PAY_TO: PAY_TO,
      X402_SETTLER_PRIVATE_KEY: chain.accounts[index]!,
      X402_RPC_URL: chain.rpcUrl,
      X402_RECEIPT_POLL_MS: '20',
      REDIS_URL: redis.url,
      ...extra,
    };
  }

  const received = () => chain.usdcBalance(PAY_TO);

  async function signed(path: string, id?: string): Promise<PaymentPayload> {
    const required = paymentRequiredOf(await instances[0]!.get(path));
    const payment = await signedPayment(buyer.account, required.accepts[0]!);
    if (id === undefined) return payment;
    return {
      ...payment,
      extensions: appendPaymentIdentifierToExtensions(
        structuredClone(required.extensions ?? {}),
        id,
      ),
    };
  }

  beforeAll(async () => {
    redis = await startRedisServer({ persistent: true });
    chain = await startLocalChain();
    markets = await FakeMarkets.start();
    for (let index = 0; index < 3; index += 1) instances.push(await startApp(envOf(index)));
    await instances[0]!.refresh();
    buyer = await fundedBuyer(chain, USDC);
  }, 120_000);

  afterAll(async () => {
    for (const instance of instances) await instance.close();
    await markets.close();
    await chain.stop();
    await redis.stop();
  });

  it('one payment sent 21 times at once across three instances: one 200, one transfer', async () => {
    const payment = await signed('/v1/ticker/BTC');
    const before = await received();
    const responses = await Promise.all(
      Array.from({ length: 21 }, (_unused, index) =>
        instances[index % 3]!.get('/v1/ticker/BTC', { headers: v2Header(payment) }),
      ),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 402)).toHaveLength(20);
    expect((await received()) - before).toBe(TICKER_PRICE);
  });

  it('30 distinct payments at once across three instances: 30 × 200, 30 transfers', async () => {
    const payments = await Promise.all(Array.from({ length: 30 }, () => signed('/v1/ticker/ETH')));
    const before = await received();
    const responses = await Promise.all(
      payments.map((payment, index) =>
        instances[index % 3]!.get('/v1/ticker/ETH', { headers: v2Header(payment) }),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(30).fill(200));
    expect((await received()) - before).toBe(30n * TICKER_PRICE);
  });

  it('a payment-identifier retry on another instance gets the stored 200, no new transfer', async () => {
    const payment = await signed('/v1/ticker/SOL', `order_${Date.now()}_across`);
    const first = await instances[0]!.get('/v1/ticker/SOL', { headers: v2Header(payment) });
    expect(first.status).toBe(200);
    const body = await first.text();
    const afterFirst = await received();
    for (const instance of instances.slice(1)) {
      const retry = await instance.get('/v1/ticker/SOL', { headers: v2Header(payment) });
      expect(retry.status).toBe(200);
      expect(await retry.text()).toBe(body);
      expect(retry.headers.get('payment-response')).toBe(first.headers.get('payment-response'));
    }
    expect(await received()).toBe(afterFirst);
  });

  it('a payment-identifier retry after an instance restarts, and after Redis restarts, gets the stored 200', async () => {
    const payment = await signed('/v1/ticker/BTC', `order_${Date.now()}_restart`);
    const first = await instances[1]!.get('/v1/ticker/BTC', { headers: v2Header(payment) });
    expect(first.status).toBe(200);
    const body = await first.text();
    const afterFirst = await received();

    await instances[1]!.close();
    instances[1] = await startApp(envOf(1));
    const afterInstanceRestart = await instances[1].get('/v1/ticker/BTC', {
      headers: v2Header(payment),
    });
    expect(afterInstanceRestart.status).toBe(200);
    expect(await afterInstanceRestart.text()).toBe(body);

    await redis.restart();
    const retry = await retryWhileUnavailable(() =>
      instances[2]!.get('/v1/ticker/BTC', { headers: v2Header(payment) }),
    );
    expect(retry.status).toBe(200);
    expect(await retry.text()).toBe(body);
    expect(await received()).toBe(afterFirst);
  });

  it('refuses to start a second instance with a settlement key a live instance holds', async () => {
    await expect(startApp(envOf(0))).rejects.toThrow(
      /X402_SETTLER_PRIVATE_KEY: settler 0x[0-9a-fA-F]{40} is already used by another live instance/,
    );
  });

  it('does not start when Redis cannot be reached, saying so without the password', async () => {
    const gone = await startRedisServer();
    await gone.stop();
    const url = gone.url.replace('redis://', 'redis://:hunter2@');
    const failure = await startApp(envOf(2, { REDIS_URL: url })).then(
      () => new Error('started'),
      (error: unknown) => error as Error,
    );
    expect(failure.name).toBe('StartupError');
    expect(failure.message).toMatch(/^REDIS_URL is set but Redis cannot be reached/);
    expect(failure.message).not.toContain('hunter2');
  });

  it('answers 503 on paid routes while Redis is down, keeps free routes, and charges nothing', async () => {
    const payment = await signed('/v1/ticker/ETH');
    const before = await received();
    await redis.stopTemporarily();
    try {
      const paid = await instances[0]!.get('/v1/ticker/ETH', { headers: v2Header(payment) });
      expect(paid.status).toBe(503);
      expect(await paid.json()).toMatchObject({ code: 'shared_state_unavailable' });
      expect(paid.headers.get('retry-after')).not.toBeNull();
      expect((await instances[0]!.get('/v1/assets')).status).toBe(200);
      const ready = await instances[0]!.get('/health/ready');
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ code: 'shared_state_unavailable' });
    } finally {
      await redis.start();
    }
    expect(await received()).toBe(before);
    const served = await retryWhileUnavailable(() =>
      instances[0]!.get('/v1/ticker/ETH', { headers: v2Header(payment) }),
    );
    expect(served.status).toBe(200);
    expect((await received()) - before).toBe(TICKER_PRICE);
  });
});

describeWithRedis('venue polling with several instances', () => {
  const VENUES = ['coinbase', 'kraken', 'bitstamp'] as const;
  let redis: RedisServer;
  let chain: LocalChain;
  let buyer: Buyer;
  /** Each instance gets venues of its own, so what each one asks of them can be counted apart. */
  const venueSets: FakeMarkets[] = [];
  const instances: (RunningApp | undefined)[] = [];

  const asked = (index: number) =>
    VENUES.reduce((sum, id) => sum + venueSets[index]!.venue(id).requests.length, 0);

  /** Waits (a bounded number of times) until `condition` holds. */
  async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
    for (let attempt = 0; attempt < 200 && !(await condition()); attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  beforeAll(async () => {
    redis = await startRedisServer();
    chain = await startLocalChain();
    buyer = await fundedBuyer(chain, USDC);
    for (let index = 0; index < 3; index += 1) {
      const markets = await FakeMarkets.start({ venues: VENUES });
      venueSets.push(markets);
      instances.push(
        await startApp({
          ...markets.env(),
          PRICE_REFRESH_MS: '250',
          PRICE_STALE_MS: '60000',
          X402_SETTLER_PRIVATE_KEY: chain.accounts[index]!,
          X402_RPC_URL: chain.rpcUrl,
          X402_RECEIPT_POLL_MS: '20',
          REDIS_URL: redis.url,
        }),
      );
    }
  }, 120_000);

  afterAll(async () => {
    for (const instance of instances) await instance?.close();
    for (const markets of venueSets) await markets.close();
    await chain.stop();
    await redis.stop();
  });

  it('one instance polls: the venues see one client however many instances run', async () => {
    await until(() => venueSets.some((_set, index) => asked(index) >= 3 * VENUES.length));
    const counts = venueSets.map((_set, index) => asked(index));
    const pollers = counts.filter((count) => count > 0);
    expect(pollers).toHaveLength(1);
    // every instance serves the poller's prices
    for (const instance of instances) {
      expect((await instance!.get('/health/ready')).status).toBe(200);
    }
  });

  it("every instance answers /v1/sources with the poller's report, naming the poller", async () => {
    type Sources = {
      timestamp: string;
      poller: { instance: string | null; thisInstance: boolean };
      sources: { id: string; status: string; lastSuccessAt: string | null }[];
    };
    const sourcesOf = async (instance: RunningApp): Promise<Sources> => {
      const response = await instance.get('/v1/sources');
      expect(response.status).toBe(200);
      return (await response.json()) as Sources;
    };
    const leader = venueSets.findIndex((_set, index) => asked(index) > 0);
    const own = await sourcesOf(instances[leader]!);
    expect(own.poller).toMatchObject({ thisInstance: true });
    expect(own.poller.instance).not.toBeNull();
    for (const [index, instance] of instances.entries()) {
      if (index === leader) continue;
      let served = await sourcesOf(instance!);
      await until(async () => {
        served = await sourcesOf(instance!);
        return served.sources.every((source) => source.status === 'ok');
      });
      expect(served.poller).toEqual({ instance: own.poller.instance, thisInstance: false });
      expect(served.sources.map((source) => source.id).sort()).toEqual([...VENUES].sort());
      for (const source of served.sources) expect(source.lastSuccessAt).not.toBeNull();
      // the report is the poller's, published at most a couple of seconds ago
      expect(Date.now() - Date.parse(served.timestamp)).toBeLessThan(5000);
    }
  });

  it('the polling instance stops: another polls within seconds and fresh prices keep being served', async () => {
    const leader = venueSets.findIndex((_set, index) => asked(index) > 0);
    await instances[leader]!.close();
    instances[leader] = undefined;
    const stoppedAt = Date.now();
    const before = venueSets.map((_set, index) => asked(index));
    await until(() =>
      venueSets.some((_set, index) => index !== leader && asked(index) > before[index]!),
    );
    const successors = venueSets
      .map((_set, index) => index)
      .filter((index) => index !== leader && asked(index) > before[index]!);
    expect(successors).toHaveLength(1);

    const survivor = instances.find((instance) => instance !== undefined)!;
    const shared = survivor.app.get<SnapshotStore>(SNAPSHOT_STORE);
    await until(async () => ((await shared.current())?.asOf ?? 0) > stoppedAt);
    const required = paymentRequiredOf(await survivor.get('/v1/ticker/BTC'));
    const payment = await signedPayment(buyer.account, required.accepts[0]!);
    const response = await survivor.get('/v1/ticker/BTC', { headers: v2Header(payment) });
    expect(response.status).toBe(200);
    const served = (await response.json()) as { timestamp: string };
    expect(Date.parse(served.timestamp)).toBeGreaterThan(stoppedAt);
  });
});

/** Asks again while the instance answers 503 (its Redis connection coming back), at most 100 times. */
async function retryWhileUnavailable(ask: () => Promise<Response>): Promise<Response> {
  for (let attempt = 0; ; attempt += 1) {
    const response = await ask();
    if (response.status !== 503 || attempt >= 100) return response;
    await response.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
