/**
 * Batch settlement behind one address: two instances sharing one redis-server (channel state)
 * and one anvil, each settling with its own key and both with the same receiver authorizer
 * (X402_BATCH_AUTHORIZER_PRIVATE_KEY). A channel opened on one instance is paid on the other, and
 * one voucher presented to both at once is sold once.
 */
import { encodePaymentSignatureHeader } from '@x402/core/http';
import { signVoucher } from '@x402/evm/batch-settlement/client';
import { privateKeyToAccount } from 'viem/accounts';
import { BatchChannels } from '../src/payments/schemes/batch-settlement/batch-channels.js';
import { startLocalChain, type LocalChain } from './support/chain.js';
import { FakeMarkets } from './support/fake-markets.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { describeWithRedis } from './support/redis-suite.js';
import { startApp, type RunningApp } from './support/test-app.js';
import { paymentRequiredOf } from './support/x402-payloads.js';
import { batchBuyer, CLAIMS_BY_HAND, channelOnChain } from './support/batch-channel.js';

const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as const;
const PRICE = 2000n;

describeWithRedis('batch settlement across instances sharing Redis', () => {
  let redis: RedisServer;
  let chain: LocalChain;
  let markets: FakeMarkets;
  const instances: RunningApp[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    chain = await startLocalChain();
    markets = await FakeMarkets.start();
    for (const index of [0, 1]) {
      const app = await startApp({
        ...markets.env(),
        X402_NETWORK: 'base-sepolia',
        X402_PAY_TO: PAY_TO,
        X402_SETTLER_PRIVATE_KEY: chain.accounts[index]!,
        X402_RPC_URL: chain.rpcUrl,
        X402_RECEIPT_POLL_MS: '20',
        REDIS_URL: redis.url,
        X402_BATCH_AUTHORIZER_PRIVATE_KEY: chain.accounts[5]!,
        ...CLAIMS_BY_HAND,
      });
      instances.push(app);
      await app.refresh();
    }
  });

  afterAll(async () => {
    for (const app of instances) await app.close();
    await markets.close();
    await chain.stop();
    await redis.stop();
  });

  it('offers the same channel terms on every instance, pays a channel on either, and sells one voucher once however often and wherever it is presented', async () => {
    const [a, b] = instances as [RunningApp, RunningApp];
    const offer = async (app: RunningApp) =>
      paymentRequiredOf(await app.get('/v1/ticker/BTC')).accepts.find(
        (accept) => accept.scheme === 'batch-settlement',
      );
    expect(await offer(a)).toEqual(await offer(b));
    expect((await offer(a))?.extra).toMatchObject({
      receiverAuthorizer: privateKeyToAccount(chain.accounts[5]!).address,
    });

    const { account, fetch: pay, sent } = await batchBuyer(chain);
    // deposit on a, then vouchers alternating between the instances
    let sold = 0n;
    for (const app of [a, b, a, b]) {
      expect((await pay(`${app.url}/v1/ticker/BTC`)).status).toBe(200);
      sold += 1n;
    }
    const last = sent.at(-1)!;
    const raw = last.payload as {
      channelConfig: Record<string, unknown>;
      voucher: { channelId: `0x${string}` };
    };
    const channelId = raw.voucher.channelId;

    // the next voucher, sent to both instances at the same moment, three times each
    const next = await signVoucher(
      account,
      channelId,
      ((sold + 1n) * PRICE).toString(),
      last.accepted.network,
    );
    const header = encodePaymentSignatureHeader({
      ...last,
      payload: { type: 'voucher', channelConfig: raw.channelConfig, voucher: next },
    });
    const answers = await Promise.all(
      [a, b, a, b, a, b].map((app) =>
        fetch(`${app.url}/v1/ticker/BTC`, { headers: { 'payment-signature': header } }),
      ),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 402, 402, 402, 402, 402]);
    sold += 1n;

    // one claim from either instance: exactly what was sold
    await a.app.get(BatchChannels).claimAndSettle();
    const { totalClaimed } = await channelOnChain(chain, channelId);
    expect(totalClaimed).toBe(sold * PRICE);
    expect(await chain.usdcBalance(PAY_TO)).toBe(sold * PRICE);
  });
});
