import { decodePaymentResponseHeader } from '@x402/core/http';
import { SOLANA_DEVNET_CAIP2 } from '@x402/svm';
import type { Address, Instruction, KeyPairSigner } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS, getTransferCheckedInstruction } from '@solana-program/token';
import { responseJson } from './support/paid-app.js';
import { fundedBuyer } from './support/paying-clients.js';
import {
  handBuiltTransaction,
  solanaBuyer,
  solanaKeypair,
  type PaymentChanges,
} from './support/solana-buyers.js';
import { SOLD_ROUTE, startSolanaPaidApp, type SolanaPaidApp } from './support/solana-paid-app.js';
import { DEVNET_USDC } from './support/solana-vm.js';
import { paymentRequiredOf } from './support/x402-payloads.js';

const BASE_SEPOLIA = 'eip155:84532';
/** Every paid route with its price in USDC's atomic units. */
const PAID_ROUTES = [
  ['/v1/ticker/BTC', 2000n],
  ['/v1/tickers/BTC,ETH', 8000n],
  ['/v1/all-tickers', 10_000n],
] as const;

describe('selling on Solana next to Base (local Solana VM, embedded facilitators)', () => {
  let app: SolanaPaidApp;

  beforeAll(async () => {
    app = await startSolanaPaidApp();
  });

  afterAll(async () => {
    await app.close();
  });

  it('offers Base and Solana at the same price in one 402; v1 clients get Base alone', async () => {
    const challenge = await app.stack.service.get(SOLD_ROUTE);
    expect(challenge.status).toBe(402);
    expect(
      paymentRequiredOf(challenge).accepts.map((a) => [a.network, a.scheme, a.amount, a.payTo]),
    ).toEqual([
      [BASE_SEPOLIA, 'exact', '2000', app.stack.payTo],
      [SOLANA_DEVNET_CAIP2, 'exact', '2000', app.payTo.address],
    ]);
    expect(app.offer).toMatchObject({
      asset: DEVNET_USDC,
      extra: { feePayer: expect.any(String) as string },
    });
    const body = await responseJson(challenge);
    expect((body['accepts'] as { network: string }[]).map((a) => a.network)).toEqual([
      'base-sepolia',
    ]);
  });

  it("sells every paid route to the official client holding only Solana USDC: the pay-to's balance rises by exactly the prices", async () => {
    const buyer = await solanaBuyer(app.rpc, 1_000_000n);
    const before = await app.payToBalance();
    let total = 0n;
    for (const [path, price] of PAID_ROUTES) {
      const response = await buyer.fetch(`${app.stack.service.url}${path}`);
      expect(response.status).toBe(200);
      const receipt = decodePaymentResponseHeader(response.headers.get('payment-response') ?? '');
      expect(receipt).toMatchObject({ success: true, network: SOLANA_DEVNET_CAIP2 });
      total += price;
      expect((await app.payToBalance()) - before).toBe(total);
    }
    expect(await app.rpc.vm.tokenBalance(buyer.signer.address)).toBe(1_000_000n - total);
  });

  it('sells the same route on the same running service to a client holding only Base USDC', async () => {
    const { chain, payTo, service } = app.stack;
    const buyer = await fundedBuyer(chain, 1_000_000n, BASE_SEPOLIA);
    const before = { base: await chain.usdcBalance(payTo), solana: await app.payToBalance() };
    const response = await buyer.fetchV2(`${service.url}${SOLD_ROUTE}`);
    expect(response.status).toBe(200);
    expect(await chain.usdcBalance(payTo)).toBe(before.base + 2000n);
    expect(await app.payToBalance()).toBe(before.solana);
  });

  describe('refuses with a 402 naming the reason, and moves nothing', () => {
    let buyer: KeyPairSigner;

    beforeAll(async () => {
      buyer = (await solanaKeypair()).signer;
      await app.rpc.vm.setTokenBalance(buyer.address, 1_000_000n);
    });

    const balances = async (): Promise<bigint[]> => [
      await app.payToBalance(),
      await app.rpc.vm.tokenBalance(buyer.address),
    ];

    async function expectRefused(changes: PaymentChanges, reason: string): Promise<void> {
      const before = await balances();
      const response = await app.pay(
        await handBuiltTransaction(app.rpc, buyer, app.offer, changes),
      );
      expect(response.status).toBe(402);
      expect(paymentRequiredOf(response).error).toContain(reason);
      expect(await balances()).toEqual(before);
    }

    it('a replayed transaction', async () => {
      const transaction = await handBuiltTransaction(app.rpc, buyer, app.offer);
      expect((await app.pay(transaction)).status).toBe(200);
      const before = await balances();
      const replayed = await app.pay(transaction);
      expect(replayed.status).toBe(402);
      expect(paymentRequiredOf(replayed).error).toContain('payment_already_used');
      expect(await balances()).toEqual(before);
    });

    it('a transaction with an extra instruction', async () => {
      const other = (await solanaKeypair()).signer;
      await app.rpc.vm.setTokenBalance(other.address, 0n);
      const extra: Instruction = getTransferCheckedInstruction(
        {
          source: await app.rpc.vm.tokenAccount(buyer.address),
          mint: DEVNET_USDC,
          destination: await app.rpc.vm.tokenAccount(other.address),
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
      await app.rpc.vm.setTokenBalance(other.address, 0n);
      await expectRefused({ destinationOwner: other.address }, 'recipient_mismatch');
    });

    it('a transfer of another mint', async () => {
      const mint = (await solanaKeypair()).signer.address;
      app.rpc.vm.createMint(mint);
      await app.rpc.vm.setTokenBalance(buyer.address, 1_000_000n, mint);
      await app.rpc.vm.setTokenBalance(app.payTo.address, 0n, mint);
      await expectRefused({ mint }, 'mint_mismatch');
      expect(await app.rpc.vm.tokenBalance(app.payTo.address, mint)).toBe(0n);
    });

    it('an underpayment (and an overpayment)', async () => {
      await expectRefused({ amount: 1999n }, 'amount_mismatch');
      await expectRefused({ amount: 2001n }, 'amount_mismatch');
    });
  });

  describe("protects the fee payer's SOL (it pays every transaction it sends, landed or not)", () => {
    const feePayerLamports = (): bigint =>
      app.rpc.vm.lamports(app.offer.extra['feePayer'] as Address);
    /** One fee of a transaction the SDK's client builds: two signatures, 20,000 CU at 1 µlamport. */
    const ONE_FEE = 2n * 5000n + 1n;

    it('refuses a transaction asking a high compute budget with a 402 before anything is sent', async () => {
      const buyer = (await solanaKeypair()).signer;
      await app.rpc.vm.setTokenBalance(buyer.address, 1_000_000n);
      const before = [feePayerLamports(), await app.payToBalance()];
      for (const [changes, reason] of [
        [
          { computeUnitLimit: 1_400_000, computeUnitPrice: 5_000_000 },
          'compute_unit_limit_too_high',
        ],
        [{ computeUnitLimit: 40_001 }, 'compute_unit_limit_too_high'],
        [{ computeUnitPrice: 50_001 }, 'compute_unit_price_too_high'],
      ] as const) {
        const response = await app.pay(
          await handBuiltTransaction(app.rpc, buyer, app.offer, changes),
        );
        expect(response.status).toBe(402);
        expect(paymentRequiredOf(response).error).toContain(reason);
      }
      expect([feePayerLamports(), await app.payToBalance()]).toEqual(before);
      expect(await app.rpc.vm.tokenBalance(buyer.address)).toBe(1_000_000n);
    });

    it('sells one of several different transactions sent at once from an account holding one price; the others are refused before sending', async () => {
      const buyer = (await solanaKeypair()).signer;
      await app.rpc.vm.setTokenBalance(buyer.address, 2000n);
      const transactions = await Promise.all(
        Array.from({ length: 4 }, () => handBuiltTransaction(app.rpc, buyer, app.offer)),
      );
      const fees = feePayerLamports();
      const paid = await app.payToBalance();
      const responses = await Promise.all(transactions.map((transaction) => app.pay(transaction)));
      const statuses = responses.map((response) => response.status).sort();
      expect(statuses).toEqual([200, 402, 402, 402]);
      for (const response of responses.filter((r) => r.status === 402)) {
        expect(paymentRequiredOf(response).error).toContain('payment_in_progress');
      }
      expect(await app.payToBalance()).toBe(paid + 2000n);
      expect(await app.rpc.vm.tokenBalance(buyer.address)).toBe(0n);
      expect(fees - feePayerLamports()).toBeLessThanOrEqual(ONE_FEE);
    });

    it('lets the buyer pay again once its payment is over', async () => {
      const buyer = (await solanaKeypair()).signer;
      await app.rpc.vm.setTokenBalance(buyer.address, 4000n);
      for (let i = 0; i < 2; i += 1) {
        const transaction = await handBuiltTransaction(app.rpc, buyer, app.offer);
        expect((await app.pay(transaction)).status).toBe(200);
      }
      expect(await app.rpc.vm.tokenBalance(buyer.address)).toBe(0n);
    });
  });
});
