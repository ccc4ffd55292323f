/**
 * A paid price stream through a crash: the built service as a real process (A) and an in-process
 * instance (B) share one redis-server (channel state, prices) and one anvil. A stream on A is
 * killed with SIGKILL mid-stream; the buyer reconnects to B with Last-Event-ID and a fresh
 * voucher. Nothing charged is lost, nothing is charged twice, the update that may not have
 * reached the buyer is re-sent free, exactly as charged, and the claim is what was charged.
 */
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequirements } from '@x402/core/types';
import { BatchChannels } from '../src/payments/schemes/batch-settlement/batch-channels.js';
import { signVoucher } from '@x402/evm/batch-settlement/client';
import {
  lastStreamChargeOf,
  type StreamChannel,
} from '../src/payments/schemes/batch-settlement/stream-charges.js';
import { batchBuyer, CLAIMS_BY_HAND } from './support/batch-channel.js';
import { BUILD_TIMEOUT_MS, ServiceProcess, buildIfStale } from './support/built-service.js';
import { startLocalChain, type LocalChain } from './support/chain.js';
import { FakeMarkets } from './support/fake-markets.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { describeWithRedis } from './support/redis-suite.js';
import { SseClient } from './support/sse-client.js';
import { startApp, type RunningApp } from './support/test-app.js';
import { paymentRequiredOf } from './support/x402-payloads.js';

const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as const;
const UNIT = 100n;

describeWithRedis('a paid stream across a crash and a second instance', () => {
  let redis: RedisServer;
  let chain: LocalChain;
  let markets: FakeMarkets;
  let b: RunningApp;
  let a: ServiceProcess | undefined;
  let step = 0;
  let bClosed = false;

  beforeAll(async () => {
    await buildIfStale();
    redis = await startRedisServer();
    chain = await startLocalChain();
    markets = await FakeMarkets.start();
    const env = {
      ...markets.env(),
      X402_NETWORK: 'base-sepolia',
      X402_PAY_TO: PAY_TO,
      X402_RPC_URL: chain.rpcUrl,
      X402_RECEIPT_POLL_MS: '20',
      REDIS_URL: redis.url,
      X402_BATCH_AUTHORIZER_PRIVATE_KEY: chain.accounts[5]!,
      PRICE_REFRESH_MS: '1000',
      ...CLAIMS_BY_HAND,
    };
    // B first: it polls the venues and publishes the prices both instances stream
    b = await startApp({ ...env, X402_SETTLER_PRIVATE_KEY: chain.accounts[1]! });
    await b.refresh();
    a = await ServiceProcess.start({
      ...env,
      X402_FACILITATOR: 'embedded',
      X402_SCHEMES: 'exact,batch-settlement',
      X402_SETTLER_PRIVATE_KEY: chain.accounts[0]!,
    });
    await a.ready();
  }, BUILD_TIMEOUT_MS + 60_000);

  afterAll(async () => {
    await a?.stop('SIGKILL');
    if (!bClosed) await b.close();
    await markets.close();
    await chain.stop();
    await redis.stop();
  });

  function movePrices(): void {
    step += 1;
    const factor = 1 + (step % 2 === 0 ? 1 : -1) * 0.0005 * step;
    for (const id of markets.venues.keys()) markets.scale(id, factor);
  }

  async function moveUntil(stream: SseClient, done: () => boolean, maxMoves = 30): Promise<void> {
    for (let moves = 0; !done(); moves += 1) {
      if (moves >= maxMoves) throw new Error(`not after ${maxMoves} moves: ${stream.body}`);
      const seen = stream.events.length;
      movePrices();
      await stream.until((events) => events.length > seen || done(), 4000).catch(() => undefined);
    }
  }

  it('loses no charge at a kill -9, and a reconnect to another instance re-sends the last update free, never charging twice', async () => {
    const channels = b.app.get(BatchChannels);
    const record = (channelId: string) => channels.channels().get(channelId);
    const buyer = await batchBuyer(chain, { depositMultiplier: 10 });
    expect((await buyer.fetch(`${b.url}/v1/ticker/BTC`)).status).toBe(200);
    const channelId = (buyer.sent[0]!.payload as { voucher: { channelId: string } }).voucher
      .channelId;
    await channels.claimAndSettle();
    const before = await chain.usdcBalance(PAY_TO);
    const base = BigInt((await record(channelId))!.chargedCumulativeAmount);

    const offered: PaymentRequirements = paymentRequiredOf(await a!.get('/v1/stream/BTC'))
      .accepts[0]!;
    const accepted = { ...offered, amount: (10n * UNIT).toString() };
    const created = await buyer.scheme.createPaymentPayload(2, accepted);
    const header = encodePaymentSignatureHeader({
      x402Version: 2,
      accepted,
      payload: created.payload,
    });
    const first = await SseClient.open(`${a!.url}/v1/stream/BTC,ETH?maxHz=10`, {
      'payment-signature': header,
    });
    expect(first.status).toBe(200);
    await moveUntil(first, () => first.named('price').length >= 3);
    await a!.stop('SIGKILL');
    await first.untilEnded();

    const received = first.named('price');
    const afterCrash = await record(channelId);
    const charged = BigInt(afterCrash!.chargedCumulativeAmount);
    // every update delivered is charged, at most one more (charged, its write cut by the kill)
    expect(charged - base).toBeGreaterThanOrEqual(BigInt(received.length) * UNIT);
    expect(charged - base).toBeLessThanOrEqual(BigInt(received.length + 1) * UNIT);
    expect(lastStreamChargeOf(afterCrash)).toBe(charged.toString());

    // the buyer saw the last update only partly: it reconnects from the one before, to B, with a
    // fresh voucher on the charged total (its old one, public once claimed, proves nothing)
    const fresh = async (max: bigint, budget: bigint) =>
      encodePaymentSignatureHeader({
        x402Version: 2,
        accepted: { ...offered, amount: budget.toString() },
        payload: {
          type: 'voucher',
          channelConfig: (buyer.sent[0]!.payload as { channelConfig: object }).channelConfig,
          voucher: await signVoucher(
            buyer.account,
            channelId as `0x${string}`,
            max.toString(),
            offered.network,
          ),
        },
      });
    const seenId = received.at(-2)!.id!;
    const second = await SseClient.open(`${b.url}/v1/stream/BTC,ETH?maxHz=10`, {
      'payment-signature': await fresh(charged + 10n * UNIT, 10n * UNIT),
      'last-event-id': seenId,
    });
    expect(second.status).toBe(200);
    await second.until((events) => events.some((event) => event.event === 'open'));
    expect(second.named('open')[0]!.data).toMatchObject({
      charged: charged.toString(),
      covered: (charged + 10n * UNIT).toString(),
    });
    await moveUntil(second, () => second.named('price').length >= 1);
    const resent = second.named('price')[0]!;
    expect(resent.id).toBe(charged.toString());
    // exactly the update that was charged last: its symbol and price, not the price now
    const kept = JSON.parse((afterCrash as StreamChannel).lastStreamContent!) as {
      symbol: string;
      price: number;
      timestamp: number;
    };
    expect(['BTC', 'ETH']).toContain(kept.symbol);
    expect(resent.data).toMatchObject({
      price: { [kept.symbol]: kept.price },
      timestamp: new Date(kept.timestamp).toISOString(),
    });
    // re-sent free
    expect(BigInt((await record(channelId))!.chargedCumulativeAmount)).toBe(charged);

    await moveUntil(second, () => second.named('price').length >= 3);
    const ids = second.named('price').map((event) => event.id);
    expect(ids).toEqual([charged, charged + UNIT, charged + 2n * UNIT].map(String));
    second.destroy();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const final = BigInt((await record(channelId))!.chargedCumulativeAmount);
    expect(final).toBe(charged + 2n * UNIT);

    await channels.claimAndSettle();
    expect(await chain.usdcBalance(PAY_TO)).toBe(before + (final - base));

    // B shuts down with a stream open: the stream is told so before the channel store closes
    const third = await SseClient.open(`${b.url}/v1/stream/BTC,ETH?maxHz=10`, {
      'payment-signature': await fresh(final + 9n * UNIT, 9n * UNIT),
    });
    await third.until((events) => events.some((event) => event.event === 'open'));
    bClosed = true;
    await b.close();
    await third.untilEnded();
    expect(third.events.at(-1)).toMatchObject({
      event: 'end',
      data: { reason: 'shutdown', charged: final.toString() },
    });
  });
});
