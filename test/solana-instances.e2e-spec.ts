/**
 * Two instances as one service on Solana: real Nest applications sharing one redis-server
 * (REDIS_URL), one anvil chain (each its own EVM settlement key) and one local Solana VM (one
 * fee payer). A Solana transaction is one payment across instances.
 */
import type { PaymentRequirements } from '@x402/core/types';
import { SOLANA_DEVNET_CAIP2 } from '@x402/svm';
import type { KeyPairSigner } from '@solana/kit';
import { startLocalChain, type LocalChain } from './support/chain.js';
import { FakeMarkets } from './support/fake-markets.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { describeWithRedis } from './support/redis-suite.js';
import { handBuiltTransaction, solanaKeypair } from './support/solana-buyers.js';
import { SolanaRpcServer } from './support/solana-rpc.js';
import { startApp, type RunningApp } from './support/test-app.js';
import { eventually } from './support/solana-paid-app.js';
import { paymentRequiredOf, v2Header } from './support/x402-payloads.js';

const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as const;
const TICKER = '/v1/ticker/BTC';

describeWithRedis('two instances selling on Solana, sharing Redis', () => {
  let redis: RedisServer;
  let chain: LocalChain;
  let markets: FakeMarkets;
  let rpc: SolanaRpcServer;
  let payTo: KeyPairSigner;
  let offer: PaymentRequirements;
  const instances: RunningApp[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    chain = await startLocalChain();
    markets = await FakeMarkets.start();
    rpc = await SolanaRpcServer.start();
    const feePayer = await solanaKeypair();
    payTo = (await solanaKeypair()).signer;
    rpc.vm.airdrop(feePayer.signer.address, 10_000_000_000n);
    await rpc.vm.setTokenBalance(payTo.address, 0n);
    for (const index of [0, 1]) {
      const instance = await startApp({
        ...markets.env(),
        X402_FACILITATOR: 'embedded',
        X402_NETWORKS: 'base-sepolia,solana-devnet',
        X402_SCHEMES: 'exact',
        X402_PAY_TO: PAY_TO,
        X402_SETTLER_PRIVATE_KEY: chain.accounts[index]!,
        X402_RPC_URL: chain.rpcUrl,
        X402_PAY_TO_SOLANA: payTo.address,
        X402_SOLANA_RPC_URL: rpc.url,
        X402_SOLANA_FEE_PAYER_KEY: JSON.stringify([...feePayer.bytes]),
        X402_SETTLE_TIMEOUT_MS: '1500',
        REDIS_URL: redis.url,
      });
      instances.push(instance);
      await instance.refresh();
    }
    const found = paymentRequiredOf(await instances[0]!.get(TICKER)).accepts.find(
      (accepted) => accepted.network === SOLANA_DEVNET_CAIP2,
    );
    if (found === undefined) throw new Error('the 402 does not offer Solana');
    offer = found;
  });

  afterAll(async () => {
    for (const instance of instances) await instance.close();
    await rpc.close();
    await markets.close();
    await chain.stop();
    await redis.stop();
  });

  it('both offer the same Solana requirement', async () => {
    const other = paymentRequiredOf(await instances[1]!.get(TICKER)).accepts.find(
      (accepted) => accepted.network === SOLANA_DEVNET_CAIP2,
    );
    expect(other).toEqual(offer);
  });

  it('one transaction sent to both instances at once serves once and moves the price once', async () => {
    const buyer = (await solanaKeypair()).signer;
    await rpc.vm.setTokenBalance(buyer.address, 1_000_000n);
    const transaction = await handBuiltTransaction(rpc, buyer, offer);
    const headers = v2Header({ x402Version: 2, accepted: offer, payload: { transaction } });
    const statuses = await Promise.all(
      Array.from({ length: 10 }, (_, copy) =>
        instances[copy % 2]!.get(TICKER, { headers }).then((response) => response.status),
      ),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 402)).toHaveLength(9);
    expect(await rpc.vm.tokenBalance(payTo.address)).toBe(2000n);
    // and later, on either instance: already used
    for (const instance of instances) {
      const replayed = await instance.get(TICKER, { headers });
      expect(replayed.status).toBe(402);
      expect(paymentRequiredOf(replayed).error).toContain('payment_already_used');
    }
    expect(await rpc.vm.tokenBalance(buyer.address)).toBe(1_000_000n - 2000n);
  });

  it('a settlement_unknown on one instance is a 502 on the other, which reconciles it once the first has stopped', async () => {
    const buyer = (await solanaKeypair()).signer;
    await rpc.vm.setTokenBalance(buyer.address, 1_000_000n);
    const transaction = await handBuiltTransaction(rpc, buyer, offer);
    const headers = v2Header({ x402Version: 2, accepted: offer, payload: { transaction } });
    const before = await rpc.vm.tokenBalance(payTo.address);
    rpc.holdSubmissions();
    const [first, second] = instances as [RunningApp, RunningApp];
    expect((await first.get(TICKER, { headers })).status).toBe(502);
    // never the 402 payment_in_progress that would invite a second payment
    const retry = await second.get(TICKER, { headers });
    expect(retry.status).toBe(502);
    expect(await retry.json()).toMatchObject({ code: 'settlement_unknown' });
    // the instance that answered stops; the other finds the sale in the ledger
    await first.close();
    instances.splice(0, 1);
    rpc.landHeld();
    expect(await rpc.vm.tokenBalance(payTo.address)).toBe(before + 2000n);
    await eventually(async () => (await second.get(TICKER, { headers })).status === 402);
    const replayed = await second.get(TICKER, { headers });
    expect(paymentRequiredOf(replayed).error).toContain('payment_already_used');
    expect(await rpc.vm.tokenBalance(buyer.address)).toBe(1_000_000n - 2000n);
  });
});
