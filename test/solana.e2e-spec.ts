import { decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequirements } from '@x402/core/types';
import { SOLANA_DEVNET_CAIP2 } from '@x402/svm';
import type { Instruction, KeyPairSigner } from '@solana/kit';
import { responseJson, startPaidApp, type PaidApp } from './support/paid-app.js';
import { fundedBuyer } from './support/paying-clients.js';
import {
  handBuiltTransaction,
  solanaBuyer,
  solanaKeypair,
  type PaymentChanges,
} from './support/solana-buyers.js';
import { RpcProxy } from './support/rpc-proxy.js';
import { SolanaRpcServer } from './support/solana-rpc.js';
import { DEVNET_USDC } from './support/solana-vm.js';
import { paymentRequiredOf, v2Header } from './support/x402-payloads.js';

const BASE_SEPOLIA = 'eip155:84532';
const TICKER = '/v1/ticker/BTC';
/** Every paid route with its price in USDC's atomic units. */
const PAID_ROUTES = [
  ['/v1/ticker/BTC', 2000n],
  ['/v1/tickers/BTC,ETH', 8000n],
  ['/v1/all-tickers', 10_000n],
] as const;

/** Asks `probe` every 100 ms until it holds (at most `ms`). */
async function eventually(probe: () => Promise<boolean>, ms = 10_000): Promise<void> {
  for (const until = Date.now() + ms; Date.now() < until;) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`not within ${ms} ms`);
}

describe('selling on Solana next to Base (local Solana VM, embedded facilitators)', () => {
  let stack: PaidApp;
  let rpc: SolanaRpcServer;
  /** Between the app and the Solana RPC, to break it. */
  let proxy: RpcProxy;
  let payTo: KeyPairSigner;
  let offer: PaymentRequirements;

  const payToBalance = (): Promise<bigint> => rpc.vm.tokenBalance(payTo.address);

  beforeAll(async () => {
    stack = await startPaidApp({
      env: {
        X402_NETWORKS: 'base-sepolia,solana-devnet',
        X402_SCHEMES: 'exact',
        X402_SETTLE_TIMEOUT_MS: '1500',
      },
      beforeApp: async () => {
        rpc = await SolanaRpcServer.start();
        proxy = await RpcProxy.start(rpc.url);
        const feePayer = await solanaKeypair();
        payTo = (await solanaKeypair()).signer;
        rpc.vm.airdrop(feePayer.signer.address, 10_000_000_000n);
        await rpc.vm.setTokenBalance(payTo.address, 0n);
        return {
          X402_PAY_TO_SOLANA: payTo.address,
          X402_SOLANA_RPC_URL: proxy.url,
          X402_SOLANA_FEE_PAYER_KEY: JSON.stringify([...feePayer.bytes]),
        };
      },
    });
    const found = paymentRequiredOf(await stack.service.get(TICKER)).accepts.find(
      (accepted) => accepted.network === SOLANA_DEVNET_CAIP2,
    );
    if (found === undefined) throw new Error('the 402 does not offer Solana');
    offer = found;
  });

  afterAll(async () => {
    await stack.close();
    await proxy.close();
    await rpc.close();
  });

  it('offers Base and Solana at the same price in one 402; v1 clients get Base alone', async () => {
    const challenge = await stack.service.get(TICKER);
    expect(challenge.status).toBe(402);
    expect(
      paymentRequiredOf(challenge).accepts.map((a) => [a.network, a.scheme, a.amount, a.payTo]),
    ).toEqual([
      [BASE_SEPOLIA, 'exact', '2000', stack.payTo],
      [SOLANA_DEVNET_CAIP2, 'exact', '2000', payTo.address],
    ]);
    expect(offer).toMatchObject({
      asset: DEVNET_USDC,
      extra: { feePayer: expect.any(String) as string },
    });
    const body = await responseJson(challenge);
    expect((body['accepts'] as { network: string }[]).map((a) => a.network)).toEqual([
      'base-sepolia',
    ]);
  });

  it("sells every paid route to the official client holding only Solana USDC: the pay-to's balance rises by exactly the prices", async () => {
    const buyer = await solanaBuyer(rpc, 1_000_000n);
    const before = await payToBalance();
    let total = 0n;
    for (const [path, price] of PAID_ROUTES) {
      const response = await buyer.fetch(`${stack.service.url}${path}`);
      expect(response.status).toBe(200);
      const receipt = decodePaymentResponseHeader(response.headers.get('payment-response') ?? '');
      expect(receipt).toMatchObject({ success: true, network: SOLANA_DEVNET_CAIP2 });
      total += price;
      expect((await payToBalance()) - before).toBe(total);
    }
    expect(await rpc.vm.tokenBalance(buyer.signer.address)).toBe(1_000_000n - total);
  });

  it('sells the same route on the same running service to a client holding only Base USDC', async () => {
    const buyer = await fundedBuyer(stack.chain, 1_000_000n, BASE_SEPOLIA);
    const before = {
      base: await stack.chain.usdcBalance(stack.payTo),
      solana: await payToBalance(),
    };
    const response = await buyer.fetchV2(`${stack.service.url}${TICKER}`);
    expect(response.status).toBe(200);
    expect(await stack.chain.usdcBalance(stack.payTo)).toBe(before.base + 2000n);
    expect(await payToBalance()).toBe(before.solana);
  });

  describe('refuses with a 402 naming the reason, and moves nothing', () => {
    let buyer: KeyPairSigner;

    beforeAll(async () => {
      buyer = (await solanaKeypair()).signer;
      await rpc.vm.setTokenBalance(buyer.address, 1_000_000n);
    });

    async function pay(transaction: string): Promise<Response> {
      return stack.service.get(TICKER, {
        headers: v2Header({ x402Version: 2, accepted: offer, payload: { transaction } }),
      });
    }

    async function expectRefused(changes: PaymentChanges, reason: string): Promise<void> {
      const before = [await payToBalance(), await rpc.vm.tokenBalance(buyer.address)];
      const response = await pay(await handBuiltTransaction(rpc, buyer, offer, changes));
      expect(response.status).toBe(402);
      expect(paymentRequiredOf(response).error).toContain(reason);
      expect([await payToBalance(), await rpc.vm.tokenBalance(buyer.address)]).toEqual(before);
    }

    it('a replayed transaction', async () => {
      const transaction = await handBuiltTransaction(rpc, buyer, offer);
      expect((await pay(transaction)).status).toBe(200);
      const before = await payToBalance();
      const replayed = await pay(transaction);
      expect(replayed.status).toBe(402);
      expect(paymentRequiredOf(replayed).error).toContain('payment_already_used');
      expect(await payToBalance()).toBe(before);
    });

    it('a transaction with an extra instruction', async () => {
      const other = (await solanaKeypair()).signer;
      await rpc.vm.setTokenBalance(other.address, 0n);
      const { getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS } =
        await import('@solana-program/token');
      const extra: Instruction = getTransferCheckedInstruction(
        {
          source: await rpc.vm.tokenAccount(buyer.address),
          mint: DEVNET_USDC,
          destination: await rpc.vm.tokenAccount(other.address),
          authority: buyer,
          amount: 1n,
          decimals: 6,
        },
        { programAddress: TOKEN_PROGRAM_ADDRESS },
      );
      await expectRefused({ extra: [extra] }, 'extra_instruction');
    });

    it('a transfer to another account', async () => {
      const other = (await solanaKeypair()).signer;
      await rpc.vm.setTokenBalance(other.address, 0n);
      await expectRefused({ destinationOwner: other.address }, 'recipient_mismatch');
    });

    it('a transfer of another mint', async () => {
      const mint = (await solanaKeypair()).signer.address;
      rpc.vm.createMint(mint);
      await rpc.vm.setTokenBalance(buyer.address, 1_000_000n, mint);
      await rpc.vm.setTokenBalance(payTo.address, 0n, mint);
      await expectRefused({ mint }, 'mint_mismatch');
      expect(await rpc.vm.tokenBalance(payTo.address, mint)).toBe(0n);
    });

    it('an underpayment (and an overpayment)', async () => {
      await expectRefused({ amount: 1999n }, 'amount_mismatch');
      await expectRefused({ amount: 2001n }, 'amount_mismatch');
    });
  });

  describe('a submission the chain has not confirmed in time', () => {
    it('is a 502 settlement_unknown, refused while unknown, and settled by the reconciler when it lands', async () => {
      const buyer = (await solanaKeypair()).signer;
      await rpc.vm.setTokenBalance(buyer.address, 1_000_000n);
      const transaction = await handBuiltTransaction(rpc, buyer, offer);
      const pay = (): Promise<Response> =>
        stack.service.get(TICKER, {
          headers: v2Header({ x402Version: 2, accepted: offer, payload: { transaction } }),
        });
      const before = await payToBalance();
      rpc.holdSubmissions();
      const unknown = await pay();
      expect(unknown.status).toBe(502);
      expect(await responseJson(unknown)).toMatchObject({ code: 'settlement_unknown' });
      expect((await pay()).status).toBe(502);
      expect(await payToBalance()).toBe(before);

      rpc.landHeld();
      expect(await payToBalance()).toBe(before + 2000n);
      await eventually(async () => (await pay()).status === 402);
      expect(paymentRequiredOf(await pay()).error).toContain('payment_already_used');
      expect(await payToBalance()).toBe(before + 2000n);
    });

    it('gives the claim back once its blockhash expired unlanded: nothing was taken', async () => {
      const buyer = (await solanaKeypair()).signer;
      await rpc.vm.setTokenBalance(buyer.address, 1_000_000n);
      const transaction = await handBuiltTransaction(rpc, buyer, offer);
      const pay = (): Promise<Response> =>
        stack.service.get(TICKER, {
          headers: v2Header({ x402Version: 2, accepted: offer, payload: { transaction } }),
        });
      const before = await payToBalance();
      rpc.holdSubmissions();
      expect((await pay()).status).toBe(502);
      rpc.dropHeld();
      // released: presented again, the expired transaction is refused by the facilitator
      await eventually(async () => (await pay()).status === 402);
      expect(await payToBalance()).toBe(before);
      expect(await rpc.vm.tokenBalance(buyer.address)).toBe(1_000_000n);
    });
  });

  describe('a Solana RPC that stops answering', () => {
    const offeredNetworks = async (): Promise<string[]> =>
      paymentRequiredOf(await stack.service.get(TICKER)).accepts.map((a) => a.network);

    it('makes a Solana payment a 503 (nothing charged), not a 402', async () => {
      const buyer = (await solanaKeypair()).signer;
      await rpc.vm.setTokenBalance(buyer.address, 1_000_000n);
      const transaction = await handBuiltTransaction(rpc, buyer, offer);
      proxy.fail('*', { kind: 'error', message: 'injected: this RPC is down' });
      try {
        const response = await stack.service.get(TICKER, {
          headers: v2Header({ x402Version: 2, accepted: offer, payload: { transaction } }),
        });
        expect(response.status).toBe(503);
      } finally {
        proxy.clear();
      }
      expect(await rpc.vm.tokenBalance(buyer.address)).toBe(1_000_000n);
    });

    it('leaves Solana out of the 402 while Base sells, and offers it again when it answers', async () => {
      proxy.fail('*', { kind: 'error', message: 'injected: this RPC is down' });
      try {
        await eventually(async () => !(await offeredNetworks()).includes(SOLANA_DEVNET_CAIP2));
        expect(await offeredNetworks()).toEqual([BASE_SEPOLIA]);
        const base = await fundedBuyer(stack.chain, 1_000_000n, BASE_SEPOLIA);
        expect((await base.fetchV2(`${stack.service.url}${TICKER}`)).status).toBe(200);
        expect(await (await stack.service.get('/health/ready')).json()).toMatchObject({
          networks: [
            { network: BASE_SEPOLIA, state: 'up' },
            {
              network: SOLANA_DEVNET_CAIP2,
              state: 'down',
              reason: expect.stringContaining('getSlot') as string,
            },
          ],
        });
      } finally {
        proxy.clear();
      }
      await eventually(async () => (await offeredNetworks()).includes(SOLANA_DEVNET_CAIP2));
      const buyer = await solanaBuyer(rpc, 1_000_000n);
      expect((await buyer.fetch(`${stack.service.url}${TICKER}`)).status).toBe(200);
    });
  });
});
