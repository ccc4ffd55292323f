/**
 * A landed Solana transaction presented to an instance whose ledger never saw it (a restart, or a
 * second instance without Redis): the chain shows the fee payer's signature landed, but before
 * this request sent it. Never a second 200.
 */
import type { PaymentRequirements } from '@x402/core/types';
import { SOLANA_DEVNET_CAIP2 } from '@x402/svm';
import type { KeyPairSigner } from '@solana/kit';
import { startLocalChain, type LocalChain } from './support/chain.js';
import { FakeMarkets } from './support/fake-markets.js';
import { handBuiltTransaction, solanaKeypair } from './support/solana-buyers.js';
import { SolanaRpcServer } from './support/solana-rpc.js';
import { startApp, type RunningApp } from './support/test-app.js';
import { paymentRequiredOf, v2Header } from './support/x402-payloads.js';

const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as const;
const TICKER = '/v1/ticker/BTC';

describe('a landed Solana transaction presented to a fresh ledger (e2e, local VM)', () => {
  let chain: LocalChain;
  let markets: FakeMarkets;
  let rpc: SolanaRpcServer;
  let payTo: KeyPairSigner;
  let env: Record<string, string>;
  const instances: RunningApp[] = [];

  /** An instance of the service with a ledger of its own (no REDIS_URL). */
  async function instance(): Promise<RunningApp> {
    const started = await startApp(env);
    instances.push(started);
    await started.refresh();
    return started;
  }

  async function offerOf(app: RunningApp): Promise<PaymentRequirements> {
    const offer = paymentRequiredOf(await app.get(TICKER)).accepts.find(
      (accepted) => accepted.network === SOLANA_DEVNET_CAIP2,
    );
    if (offer === undefined) throw new Error('the 402 does not offer Solana');
    return offer;
  }

  function pay(app: RunningApp, offer: PaymentRequirements, transaction: string) {
    return app.get(TICKER, {
      headers: v2Header({ x402Version: 2, accepted: offer, payload: { transaction } }),
    });
  }

  beforeAll(async () => {
    chain = await startLocalChain();
    markets = await FakeMarkets.start();
    rpc = await SolanaRpcServer.start();
    const feePayer = await solanaKeypair();
    payTo = (await solanaKeypair()).signer;
    rpc.vm.airdrop(feePayer.signer.address, 10_000_000_000n);
    await rpc.vm.setTokenBalance(payTo.address, 0n);
    env = {
      ...markets.env(),
      X402_FACILITATOR: 'embedded',
      X402_NETWORKS: 'base-sepolia,solana-devnet',
      X402_SCHEMES: 'exact',
      X402_PAY_TO: PAY_TO,
      X402_SETTLER_PRIVATE_KEY: chain.accounts[0]!,
      X402_RPC_URL: chain.rpcUrl,
      X402_PAY_TO_SOLANA: payTo.address,
      X402_SOLANA_RPC_URL: rpc.url,
      X402_SOLANA_FEE_PAYER_KEY: JSON.stringify([...feePayer.bytes]),
      X402_SETTLE_TIMEOUT_MS: '1500',
    };
  }, 60_000);

  afterAll(async () => {
    for (const started of instances) await started.close();
    await rpc.close();
    await markets.close();
    await chain.stop();
  });

  it('is answered 402 payment_already_used, nothing served and nothing moved, after a restart or on a second instance', async () => {
    const first = await instance();
    const offer = await offerOf(first);
    const buyer = (await solanaKeypair()).signer;
    await rpc.vm.setTokenBalance(buyer.address, 1_000_000n);
    const transaction = await handBuiltTransaction(rpc, buyer, offer);

    const sold = await pay(first, offer, transaction);
    expect(sold.status).toBe(200);
    const price = BigInt(offer.amount);
    expect(await rpc.vm.tokenBalance(payTo.address)).toBe(price);

    // a second instance without a shared ledger, and the first one restarted: neither saw it
    const second = await instance();
    await first.close();
    instances.splice(instances.indexOf(first), 1);
    const restarted = await instance();
    for (const fresh of [second, restarted]) {
      const replay = await pay(fresh, offer, transaction);
      expect(replay.status).toBe(402);
      const body = (await replay.json()) as { error?: string; price?: unknown };
      expect(body.price).toBeUndefined();
      expect(body.error).toMatch(/^payment_already_used: .*landed before this request sent it/);
      expect(replay.headers.get('payment-response')).toBeNull();
      // and the same instance again: used, from its ledger now
      const again = await pay(fresh, offer, transaction);
      expect(again.status).toBe(402);
      expect(((await again.json()) as { error?: string }).error).toMatch(/^payment_already_used/);
    }
    expect(await rpc.vm.tokenBalance(payTo.address)).toBe(price);
    expect(await rpc.vm.tokenBalance(buyer.address)).toBe(1_000_000n - price);
  });
});
