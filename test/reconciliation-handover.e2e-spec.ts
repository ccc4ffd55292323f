/**
 * An uncertain settlement outlives the instance that answered it: two built services as real
 * processes share Redis and one anvil; the first settles behind an RPC that errors after the
 * transaction reached the chain (and then errors on every read, so it cannot reconcile), answers
 * 502 settlement_unknown, and goes away. The other finds the sale in the shared ledger, takes it
 * over, and serves the stored 200 to a retry with the same payment-identifier; exactly one
 * transfer moves. The failing RPC's own text is hostile: a forged log line and its URL's key
 * never reach a log line or a response.
 */
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import type { PaymentPayload } from '@x402/core/types';
import { BUILD_TIMEOUT_MS, ServiceProcess, buildIfStale } from './support/built-service.js';
import { startLocalChain, type LocalChain } from './support/chain.js';
import { FakeMarkets } from './support/fake-markets.js';
import { fundedBuyer, USDC, type Buyer } from './support/paying-clients.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { describeWithRedis } from './support/redis-suite.js';
import { RpcProxy } from './support/rpc-proxy.js';
import { paymentRequiredOf, signedPayment, v2Header } from './support/x402-payloads.js';

const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as const;
const TICKER_PRICE = 2000n;
/** Providers put keys in the RPC URL: it must appear nowhere. */
const RPC_KEY = 'rpc-key-7f3a9c';
/** What a hostile RPC answers: a line break, then a forged log line of the service's own shape. */
const HOSTILE = `boom\n[Nest] 4242  - 11/27/2026, 6:00:00 AM     LOG [SoldAnswers] payment settled FORGED`;

describeWithRedis('an uncertain settlement handed over between instances', () => {
  let redis: RedisServer;
  let chain: LocalChain;
  let markets: FakeMarkets;
  let buyer: Buyer;
  let proxy: RpcProxy;
  const services: ServiceProcess[] = [];

  function envOf(index: number, rpcUrl: string): Record<string, string> {
    return {
      ...markets.env(),
      LOG_LEVEL: 'log',
      X402_FACILITATOR: 'embedded',
      X402_NETWORK: 'base-sepolia',
      X402_PAY_TO: PAY_TO,
      X402_SETTLER_PRIVATE_KEY: chain.accounts[index]!,
      X402_RPC_URL: rpcUrl,
      X402_RECEIPT_POLL_MS: '20',
      X402_SETTLE_TIMEOUT_MS: '4000',
      REDIS_URL: redis.url,
    };
  }

  async function start(index: number, rpcUrl: string): Promise<ServiceProcess> {
    const service = await ServiceProcess.start(envOf(index, rpcUrl));
    services.push(service);
    return service;
  }

  async function signedWithId(service: ServiceProcess, id: string): Promise<PaymentPayload> {
    const required = paymentRequiredOf(await service.get('/v1/ticker/BTC'));
    const payment = await signedPayment(buyer.account, required.accepts[0]!);
    return {
      ...payment,
      extensions: appendPaymentIdentifierToExtensions(
        structuredClone(required.extensions ?? {}),
        id,
      ),
    };
  }

  /**
   * Pays on `answering` while its RPC forwards the transaction and then errors (hostile text),
   * after which every RPC call it makes errors: a 502 it cannot reconcile by itself.
   */
  async function uncertainOn(
    answering: ServiceProcess,
    payment: PaymentPayload,
  ): Promise<Response> {
    proxy.clear();
    const sent = (): number =>
      proxy.calls.filter((call) => call === 'eth_sendRawTransaction').length;
    const sentBefore = sent();
    proxy.fail('eth_sendRawTransaction', { kind: 'error-after-forward', message: HOSTILE });
    const answer = answering.get('/v1/ticker/BTC', { headers: v2Header(payment) });
    while (sent() === sentBefore) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    proxy.fail('*', { kind: 'error', message: HOSTILE });
    return answer;
  }

  /** Retries on `other` with the same payment until it is not 502 any more. */
  async function retryUntilServed(
    other: ServiceProcess,
    payment: PaymentPayload,
  ): Promise<Response> {
    for (const until = Date.now() + 30_000; ;) {
      const retry = await other.get('/v1/ticker/BTC', { headers: v2Header(payment) });
      if (retry.status !== 502 || Date.now() > until) return retry;
      await retry.arrayBuffer();
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  function expectClean(text: string): void {
    expect(text).not.toContain(RPC_KEY);
    expect(text).not.toContain(proxy.url);
    for (const line of text.split('\n')) expect(line.startsWith('[Nest] 4242')).toBe(false);
  }

  beforeAll(async () => {
    await buildIfStale();
    redis = await startRedisServer();
    chain = await startLocalChain();
    markets = await FakeMarkets.start();
    proxy = await RpcProxy.start(chain.rpcUrl);
    buyer = await fundedBuyer(chain, USDC);
  }, BUILD_TIMEOUT_MS + 60_000);

  afterAll(async () => {
    for (const service of services) await service.stop('SIGKILL');
    await proxy.close();
    await markets.close();
    await chain.stop();
    await redis.stop();
  });

  it.each<[NodeJS.Signals, string]>([
    ['SIGKILL', 'dies: its claim expires and another instance takes the sale over'],
    ['SIGTERM', 'stops: it hands the sale over on its way out'],
  ])(
    'the answering instance is %sed after its 502 (it %s): a retry on another gets the stored 200, one transfer',
    async (signal) => {
      const answering = await start(signal === 'SIGKILL' ? 2 : 4, `${proxy.url}/v2/${RPC_KEY}`);
      const other = await start(signal === 'SIGKILL' ? 3 : 5, chain.rpcUrl);
      await Promise.all([answering.ready(), other.ready()]);
      const payment = await signedWithId(other, `order_${signal}_${Date.now()}`);
      const before = await chain.usdcBalance(PAY_TO);

      const first = await uncertainOn(answering, payment);
      expect(first.status).toBe(502);
      const problem = await first.text();
      expect(JSON.parse(problem)).toMatchObject({ code: 'settlement_unknown' });
      expectClean(problem);
      expect(problem).not.toContain('\\n[Nest]');
      // the transaction did reach the chain
      expect(await chain.usdcBalance(PAY_TO)).toBe(before + TICKER_PRICE);

      await answering.stop(signal);
      expectClean(answering.logs);
      proxy.clear();

      const served = await retryUntilServed(other, payment);
      expect(served.status).toBe(200);
      const body = (await served.json()) as { price: Record<string, number> };
      expect(Object.keys(body.price)).toEqual(['BTC']);
      expect(served.headers.get('payment-response')).toBeTruthy();
      const again = await other.get('/v1/ticker/BTC', { headers: v2Header(payment) });
      expect(again.status).toBe(200);
      expect(await chain.usdcBalance(PAY_TO)).toBe(before + TICKER_PRICE);
      // written once the stored 200 is in place: read it when it arrives
      for (const until = Date.now() + 5000; !other.logs.includes('reconciled: settled by 0x');) {
        if (Date.now() > until) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(other.logs).toContain('reconciled: settled by 0x');
      expectClean(other.logs);
      // the next case's sale is for its own pair of instances only
      await other.stop('SIGTERM');
    },
    90_000,
  );
});
