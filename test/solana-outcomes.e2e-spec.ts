import { SOLANA_DEVNET_CAIP2 } from '@x402/svm';
import { responseJson } from './support/paid-app.js';
import { fundedBuyer } from './support/paying-clients.js';
import { solanaBuyer } from './support/solana-buyers.js';
import {
  SOLD_ROUTE,
  eventually,
  startSolanaPaidApp,
  type SolanaPaidApp,
} from './support/solana-paid-app.js';
import { paymentRequiredOf } from './support/x402-payloads.js';

const BASE_SEPOLIA = 'eip155:84532';
const PRICE = 2000n;

/** Solana sales whose settlement is not a plain yes: unconfirmed in time, retried, RPC down. */
describe('Solana settlement outcomes (local Solana VM behind a breakable RPC)', () => {
  let app: SolanaPaidApp;

  beforeAll(async () => {
    app = await startSolanaPaidApp();
  });

  afterAll(async () => {
    await app.close();
  });

  describe('a submission the chain has not confirmed in time', () => {
    it('is a 502 settlement_unknown, refused while unknown, and settled by the reconciler when it lands', async () => {
      const { transaction } = await app.fundedPayment();
      const before = await app.payToBalance();
      app.rpc.holdSubmissions();
      const unknown = await app.pay(transaction);
      expect(unknown.status).toBe(502);
      expect(await responseJson(unknown)).toMatchObject({ code: 'settlement_unknown' });
      expect((await app.pay(transaction)).status).toBe(502);
      expect(await app.payToBalance()).toBe(before);

      app.rpc.landHeld();
      expect(await app.payToBalance()).toBe(before + PRICE);
      await eventually(async () => (await app.pay(transaction)).status === 402);
      expect(paymentRequiredOf(await app.pay(transaction)).error).toContain('payment_already_used');
      expect(await app.payToBalance()).toBe(before + PRICE);
    });

    it('gives the claim back once its blockhash expired unlanded: nothing was taken', async () => {
      const { buyer, transaction } = await app.fundedPayment();
      const before = await app.payToBalance();
      app.rpc.holdSubmissions();
      expect((await app.pay(transaction)).status).toBe(502);
      app.rpc.dropHeld();
      // released: presented again, the expired transaction is refused by the facilitator
      await eventually(async () => (await app.pay(transaction)).status === 402);
      expect(await app.payToBalance()).toBe(before);
      expect(await app.rpc.vm.tokenBalance(buyer.address)).toBe(1_000_000n);
    });
  });

  describe("a submission whose answer the RPC lost (sendTransaction's reply fails)", () => {
    it('is sold when the chain shows it landed: proven from the chain, not from the reply', async () => {
      const { buyer, transaction } = await app.fundedPayment();
      const before = await app.payToBalance();
      app.proxy.fail('sendTransaction', { kind: 'error-after-forward' });
      try {
        expect((await app.pay(transaction)).status).toBe(200);
      } finally {
        app.proxy.clear();
      }
      expect(await app.payToBalance()).toBe(before + PRICE);
      expect(await app.rpc.vm.tokenBalance(buyer.address)).toBe(1_000_000n - PRICE);
    });

    it('is a 502 while it may still land, and given back once its blockhash expired', async () => {
      const { buyer, transaction } = await app.fundedPayment();
      const before = await app.payToBalance();
      app.proxy.fail('sendTransaction', { kind: 'error' });
      try {
        expect((await app.pay(transaction)).status).toBe(502);
      } finally {
        app.proxy.clear();
      }
      expect((await app.pay(transaction)).status).toBe(502);
      app.rpc.vm.expireBlockhash();
      await eventually(async () => (await app.pay(transaction)).status === 402);
      expect(await app.payToBalance()).toBe(before);
      expect(await app.rpc.vm.tokenBalance(buyer.address)).toBe(1_000_000n);
    });
  });

  describe('with a payment-identifier', () => {
    it('serves a retry the stored answer, charged once; another transaction under the id is a 409', async () => {
      const { buyer, transaction } = await app.fundedPayment();
      const id = `svm-retry-${crypto.randomUUID()}`;
      const first = await app.pay(transaction, id);
      expect(first.status).toBe(200);
      const retry = await app.pay(transaction, id);
      expect(retry.status).toBe(200);
      expect(await retry.text()).toBe(await first.text());
      const { transaction: another } = await app.fundedPayment();
      expect((await app.pay(another, id)).status).toBe(409);
      expect(await app.rpc.vm.tokenBalance(buyer.address)).toBe(1_000_000n - PRICE);
    });

    it('gives a retry after a reconciled settlement_unknown the answer it bought', async () => {
      const { buyer, transaction } = await app.fundedPayment();
      const id = `svm-unknown-${crypto.randomUUID()}`;
      app.rpc.holdSubmissions();
      expect((await app.pay(transaction, id)).status).toBe(502);
      expect((await app.pay(transaction, id)).status).toBe(502);
      app.rpc.landHeld();
      await eventually(async () => (await app.pay(transaction, id)).status === 200);
      expect(await (await app.pay(transaction, id)).json()).toMatchObject({
        price: { BTC: expect.any(Number) as number },
      });
      expect(await app.rpc.vm.tokenBalance(buyer.address)).toBe(1_000_000n - PRICE);
    });
  });

  describe('a Solana RPC that stops answering', () => {
    const offeredNetworks = async (): Promise<string[]> =>
      paymentRequiredOf(await app.stack.service.get(SOLD_ROUTE)).accepts.map((a) => a.network);

    it('makes a Solana payment a 503 (nothing charged), not a 402', async () => {
      const { buyer, transaction } = await app.fundedPayment();
      app.proxy.fail('*', { kind: 'error', message: 'injected: this RPC is down' });
      try {
        expect((await app.pay(transaction)).status).toBe(503);
      } finally {
        app.proxy.clear();
      }
      expect(await app.rpc.vm.tokenBalance(buyer.address)).toBe(1_000_000n);
    });

    it('leaves Solana out of the 402 while Base sells, and offers it again when it answers', async () => {
      const { chain, service } = app.stack;
      app.proxy.fail('*', { kind: 'error', message: 'injected: this RPC is down' });
      try {
        await eventually(async () => !(await offeredNetworks()).includes(SOLANA_DEVNET_CAIP2));
        expect(await offeredNetworks()).toEqual([BASE_SEPOLIA]);
        const base = await fundedBuyer(chain, 1_000_000n, BASE_SEPOLIA);
        expect((await base.fetchV2(`${service.url}${SOLD_ROUTE}`)).status).toBe(200);
        expect(await (await service.get('/health/ready')).json()).toMatchObject({
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
        app.proxy.clear();
      }
      await eventually(async () => (await offeredNetworks()).includes(SOLANA_DEVNET_CAIP2));
      const buyer = await solanaBuyer(app.rpc, 1_000_000n);
      expect((await buyer.fetch(`${service.url}${SOLD_ROUTE}`)).status).toBe(200);
    });
  });
});
