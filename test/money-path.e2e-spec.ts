import { x402Client } from '@x402/core/client';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, SettleResponse } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import { decodePaymentResponseHeader } from '@x402/fetch';
import { EmbeddedFacilitatorClient } from '../src/payments/facilitator/embedded-facilitator.js';
import { EVERY_EMBEDDED_SCHEME } from './support/embedded-schemes.js';
import { TickersController } from '../src/tickers/tickers.controller.js';
import { FacilitatorServer } from './support/facilitator-server.js';
import { spyOnHandler } from './support/handler-spy.js';
import { requirementFor, responseJson, startPaidApp, type PaidApp } from './support/paid-app.js';
import { parseExposition, sampleValue, type Sample } from './support/prometheus.js';
import { RpcProxy } from './support/rpc-proxy.js';
import { paymentRequiredOf, signedPayment, v1Header, v2Header } from './support/x402-payloads.js';

const PRICE = 2000n;
const PERMIT2_PROXY = '0x4020615294c913F045dc10f0a5cdEbd86c280001';

/** A payment made by the official client, carrying a payment-identifier. */
async function identifiedPayment(
  stack: PaidApp,
  path: string,
  id: string,
): Promise<PaymentPayload> {
  const required = paymentRequiredOf(await stack.service.get(path));
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(stack.buyer.account));
  const payload = await client.createPaymentPayload(required);
  return {
    ...payload,
    extensions: appendPaymentIdentifierToExtensions(structuredClone(required.extensions ?? {}), id),
  };
}

/** A paid app whose chain calls go through an RpcProxy the test can break. */
async function startBehindProxy(
  env: Record<string, string> = {},
): Promise<{ stack: PaidApp; proxy: RpcProxy }> {
  let proxy: RpcProxy | undefined;
  const stack = await startPaidApp({
    env,
    beforeApp: async (chain) => {
      proxy = await RpcProxy.start(chain.rpcUrl);
      return { X402_RPC_URL: proxy.url };
    },
  });
  if (proxy === undefined) throw new Error('the proxy did not start');
  return { stack, proxy };
}

async function anvil(stack: PaidApp, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(stack.chain.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return ((await response.json()) as { result: unknown }).result;
}

/** Retries a payment until it is known settled (402 already used); before that only 502 unknown. */
async function untilKnownSettled(
  stack: PaidApp,
  path: string,
  payment: PaymentPayload,
): Promise<void> {
  for (const until = Date.now() + 20_000; ;) {
    const again = await stack.service.get(path, { headers: v2Header(payment) });
    if (again.status === 402) {
      expect((await responseJson(again)).error).toMatch(/^payment_already_used/);
      return;
    }
    expect(again.status).toBe(502);
    expect(await responseJson(again)).toMatchObject({ code: 'settlement_unknown' });
    if (Date.now() > until) throw new Error('the settled payment was never reconciled');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Retries a payment-identifier until the service answers 200; every other answer must be `settlement_unknown`. */
async function retryUntilServed(
  stack: PaidApp,
  path: string,
  payment: PaymentPayload,
  deadlineMs = 20_000,
): Promise<Response> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const response = await stack.service.get(path, { headers: v2Header(payment) });
    if (response.status === 200) return response;
    expect(response.status).toBe(502);
    expect(await responseJson(response)).toMatchObject({ code: 'settlement_unknown' });
    if (Date.now() > until) throw new Error('the unknown settlement was never reconciled');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The service's own counters, as Prometheus reads them. */
async function scrape(stack: PaidApp): Promise<Sample[]> {
  return parseExposition(await (await stack.service.get('/metrics')).text());
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sends = (proxy: RpcProxy) =>
  proxy.calls.filter((method) => method === 'eth_sendRawTransaction').length;
const estimates = (proxy: RpcProxy) =>
  proxy.calls.filter((method) => method === 'eth_estimateGas').length;
const nonceReadsOf = (proxy: RpcProxy) =>
  proxy.calls.filter((method) => method === 'eth_getTransactionCount').length;

describe('money path, embedded facilitator behind a faulty RPC', () => {
  let stack: PaidApp;
  let proxy: RpcProxy;
  const { spy: handler, original: getTicker } = spyOnHandler<TickersController['getTicker']>(
    TickersController.prototype,
    'getTicker',
  );

  beforeAll(async () => {
    ({ stack, proxy } = await startBehindProxy({ X402_SETTLE_TIMEOUT_MS: '3000' }));
  });

  afterEach(() => {
    proxy.clear();
  });

  afterAll(async () => {
    await stack.close();
    await proxy.close();
    handler.mockRestore();
  });

  describe('only what is offered is accepted', () => {
    it('a Permit2 authorization beside a decoy EIP-3009 one → 400, nothing runs, nothing moves', async () => {
      const accepted = await requirementFor(stack, '/v1/ticker/BTC');
      const decoy = await signedPayment(stack.buyer.account, accepted);
      const now = Math.floor(Date.now() / 1000);
      const attack: PaymentPayload = {
        ...decoy,
        payload: {
          ...decoy.payload,
          permit2Authorization: {
            from: stack.buyer.account.address,
            permitted: { token: accepted.asset, amount: accepted.amount },
            spender: PERMIT2_PROXY,
            nonce: '1',
            deadline: String(now + 60),
            witness: { to: stack.payTo, validAfter: String(now - 600), extra: '0x' },
          },
        },
      };
      const before = await stack.balances();
      const calls = handler.mock.calls.length;
      for (const headers of [v2Header(attack), v1Header(attack)]) {
        const response = await stack.service.get('/v1/ticker/BTC', { headers });
        expect(response.status).toBe(400);
        expect(await responseJson(response)).toMatchObject({ code: 'invalid_payment' });
      }
      expect(handler.mock.calls.length).toBe(calls);
      expect(await stack.balances()).toEqual(before);
      // The decoy alone is an ordinary payment, and still unused.
      const honest = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(decoy) });
      expect(honest.status).toBe(200);
      expect(await stack.balances()).toEqual({
        buyer: before.buyer - PRICE,
        payTo: before.payTo + PRICE,
      });
    });

    it('a Permit2 payload alone, or a requirement the route does not sell, moves nothing', async () => {
      const accepted = await requirementFor(stack, '/v1/ticker/BTC');
      const payment = await signedPayment(stack.buyer.account, accepted);
      const before = await stack.balances();
      const permit2Only = {
        ...payment,
        payload: { signature: payment.payload.signature, permit2Authorization: {} },
      };
      const longer = { ...payment, accepted: { ...accepted, maxTimeoutSeconds: 86_400 } };
      const extraField = { ...payment, accepted: { ...accepted, facilitator: 'mine' } };
      expect(
        (await stack.service.get('/v1/ticker/BTC', { headers: v2Header(permit2Only) })).status,
      ).toBe(400);
      for (const copy of [longer, extraField]) {
        const response = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(copy) });
        expect(response.status).toBe(402);
        expect((await responseJson(response)).error).toMatch(/^payment_not_offered/);
      }
      expect(await stack.balances()).toEqual(before);
    });
  });

  describe('the RPC accepts the settlement transaction but answers with an error', () => {
    it('→ 502 settlement_unknown; reconciled from the chain; a payment-identifier retry gets its 200', async () => {
      const id = `order_${Date.now()}_rpc-error-after-send`;
      const payment = await identifiedPayment(stack, '/v1/ticker/BTC', id);
      const before = await stack.balances();
      const countedBefore = await scrape(stack);
      proxy.fail('eth_sendRawTransaction', { kind: 'error-after-forward' });
      const response = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
      proxy.clear();
      expect(response.status).toBe(502);
      expect(await responseJson(response)).toMatchObject({ code: 'settlement_unknown' });
      expect(response.headers.get('retry-after')).toBe('5');
      // The money did move: the service must not have called it a refusal.
      const moved = { buyer: before.buyer - PRICE, payTo: before.payTo + PRICE };
      expect(await stack.balances()).toEqual(moved);

      const served = await retryUntilServed(stack, '/v1/ticker/BTC', payment);
      expect(await responseJson(served)).toMatchObject({
        currency: 'USD',
        price: { BTC: expect.any(Number) as number },
      });
      expect(
        decodePaymentResponseHeader(served.headers.get('payment-response') ?? ''),
      ).toMatchObject({
        success: true,
        payer: stack.buyer.account.address,
        transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) as string,
      });
      expect(await stack.balances()).toEqual(moved);
      // Revenue is counted once the chain proves it, by the reconciler, not at the 502.
      const counted = await scrape(stack);
      const route = { route: '/v1/ticker/:symbol' };
      const delta = (name: string, labels: Record<string, string>): number =>
        sampleValue(counted, name, { ...route, ...labels }) -
        sampleValue(countedBefore, name, { ...route, ...labels });
      expect(delta('x402_revenue_atomic_total', {})).toBe(Number(PRICE));
      expect(delta('x402_payments_total', { outcome: 'unknown' })).toBe(1);
      expect(delta('x402_payments_total', { outcome: 'reconciled' })).toBe(1);
      expect(delta('x402_payments_total', { outcome: 'settled' })).toBe(0);

      // The same authorization without the id: known settled now, refused for free.
      const bare = { ...payment, extensions: undefined };
      const replay = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(bare) });
      expect(replay.status).toBe(402);
      expect((await responseJson(replay)).error).toMatch(/^payment_already_used/);
      expect(await stack.balances()).toEqual(moved);
    });

    it('a send the RPC refused without forwarding is also unknown to the service, and never retaken', async () => {
      const accepted = await requirementFor(stack, '/v1/ticker/ETH');
      const payment = await signedPayment(stack.buyer.account, accepted);
      const before = await stack.balances();
      proxy.fail('eth_sendRawTransaction', { kind: 'error' });
      const response = await stack.service.get('/v1/ticker/ETH', { headers: v2Header(payment) });
      proxy.clear();
      expect(response.status).toBe(502);
      expect(await responseJson(response)).toMatchObject({ code: 'settlement_unknown' });
      expect(await stack.balances()).toEqual(before);
      const again = await stack.service.get('/v1/ticker/ETH', { headers: v2Header(payment) });
      // Not a 402: that would invite an automatic client to pay a second time.
      expect(again.status).toBe(502);
      expect(again.headers.get('retry-after')).toBe('5');
      expect(await responseJson(again)).toMatchObject({
        code: 'settlement_unknown',
        detail: expect.stringMatching(/^payment_outcome_unknown/) as string,
      });
      expect(await stack.balances()).toEqual(before);
    });

    it('after a send the RPC refused, the next payment settles: the unsent nonce is used, not skipped', async () => {
      const refused = await signedPayment(
        stack.buyer.account,
        await requirementFor(stack, '/v1/ticker/ETH'),
      );
      proxy.fail('eth_sendRawTransaction', { kind: 'error' });
      const lost = await stack.service.get('/v1/ticker/ETH', { headers: v2Header(refused) });
      proxy.clear();
      expect(lost.status).toBe(502);
      const nonceReads = nonceReadsOf(proxy);

      const next = await signedPayment(
        stack.buyer.account,
        await requirementFor(stack, '/v1/ticker/BTC'),
      );
      const before = await stack.balances();
      // a skipped nonce would leave this transaction queued behind the gap: 502 at the deadline
      const served = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(next) });
      expect(served.status).toBe(200);
      expect(await stack.balances()).toEqual({
        buyer: before.buyer - PRICE,
        payTo: before.payTo + PRICE,
      });
      // the nonce is counted in the process: read again once after the failed send, then not
      expect(nonceReadsOf(proxy)).toBe(nonceReads + 1);
      const third = await signedPayment(
        stack.buyer.account,
        await requirementFor(stack, '/v1/ticker/ETH'),
      );
      const sentBefore = sends(proxy);
      expect((await stack.service.get('/v1/ticker/ETH', { headers: v2Header(third) })).status).toBe(
        200,
      );
      expect(sends(proxy)).toBe(sentBefore + 1);
      expect(nonceReadsOf(proxy)).toBe(nonceReads + 1);
    });
  });

  describe('bounded waits', () => {
    it('receipts never answered → 502 settlement_unknown at the settlement deadline, then reconciled', async () => {
      const id = `order_${Date.now()}_silent-receipts`;
      const payment = await identifiedPayment(stack, '/v1/ticker/SOL', id);
      const before = await stack.balances();
      proxy.fail('eth_getTransactionReceipt', { kind: 'silence' });
      const started = Date.now();
      const response = await stack.service.get('/v1/ticker/SOL', { headers: v2Header(payment) });
      const waited = Date.now() - started;
      expect(response.status).toBe(502);
      const problem = await responseJson(response);
      expect(problem).toMatchObject({ code: 'settlement_unknown' });
      expect(problem.detail).toMatch(/settlement_deadline/);
      // X402_SETTLE_TIMEOUT_MS is 3 s here; the unbounded wait used to be 360 s.
      expect(waited).toBeGreaterThanOrEqual(2900);
      expect(waited).toBeLessThan(15_000);
      const moved = { buyer: before.buyer - PRICE, payTo: before.payTo + PRICE };
      expect(await stack.balances()).toEqual(moved);
      proxy.clear();
      const served = await retryUntilServed(stack, '/v1/ticker/SOL', payment);
      expect(await responseJson(served)).toMatchObject({
        price: { SOL: expect.any(Number) as number },
      });
      expect(await stack.balances()).toEqual(moved);
    });
  });

  describe('a transaction still unmined when its receipt wait ends', () => {
    // The resource server asks the facilitator once more after a pending answer; that retry
    // must wait for the transaction sent, not prepare another. (anvil's gas estimate sees the
    // pending transfer and would refuse a second send anyway; a chain estimating against its
    // latest block would not.)
    it('→ 502 settlement_unknown, sent once, then reconciled and served to a payment-identifier retry', async () => {
      const id = `order_${Date.now()}_unmined`;
      const payment = await identifiedPayment(stack, '/v1/ticker/SOL', id);
      const before = await stack.balances();
      const sent = sends(proxy);
      const estimated = estimates(proxy);
      await anvil(stack, 'evm_setAutomine', [false]);
      try {
        const response = await stack.service.get('/v1/ticker/SOL', {
          headers: v2Header(payment),
        });
        expect(response.status).toBe(502);
        expect(await responseJson(response)).toMatchObject({ code: 'settlement_unknown' });
        // the receipt wait ended with the deadline; the resource server's retry follows at once
        await sleep(1000);
      } finally {
        await anvil(stack, 'evm_setAutomine', [true]);
        await anvil(stack, 'evm_mine');
      }
      const served = await retryUntilServed(stack, '/v1/ticker/SOL', payment);
      expect(await responseJson(served)).toMatchObject({
        price: { SOL: expect.any(Number) as number },
      });
      expect(sends(proxy) - sent).toBe(1);
      expect(estimates(proxy) - estimated).toBe(1);
      const moved = { buyer: before.buyer - PRICE, payTo: before.payTo + PRICE };
      expect(await stack.balances()).toEqual(moved);
    });
  });

  describe('a client that leaves', () => {
    it('during verification is not charged, and its payment can be used later', async () => {
      const accepted = await requirementFor(stack, '/v1/ticker/BTC');
      const payment = await signedPayment(stack.buyer.account, accepted);
      const before = await stack.balances();
      const calls = handler.mock.calls.length;
      const sent = sends(proxy);
      proxy.fail('*', { kind: 'delay', ms: 700 });
      const controller = new AbortController();
      const request = stack.service
        .get('/v1/ticker/BTC', { headers: v2Header(payment), signal: controller.signal })
        .catch((error: unknown) => error);
      await sleep(300);
      controller.abort();
      expect(await request).toMatchObject({ name: 'AbortError' });
      // Verification goes on without the client; the handler runs once it passes, and the
      // settlement, finding the client gone before anything was sent, sends nothing.
      for (let waited = 0; handler.mock.calls.length === calls; waited += 50) {
        if (waited > 15_000) throw new Error('the verification never finished');
        await sleep(50);
      }
      proxy.clear();
      await sleep(1500);
      expect(sends(proxy)).toBe(sent);
      expect(await stack.balances()).toEqual(before);
      const later = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
      expect(later.status).toBe(200);
      expect(await stack.balances()).toEqual({
        buyer: before.buyer - PRICE,
        payTo: before.payTo + PRICE,
      });
    });
  });

  describe('a client that leaves during settlement (the commit point: after gas and fee estimation)', () => {
    /** Sends `payment`, hangs up once the proxy saw `method`, and says what came of the request. */
    async function leaveDuring(method: string, payment: PaymentPayload): Promise<unknown> {
      const seen = proxy.calls.filter((call) => call === method).length;
      proxy.fail(method, { kind: 'delay', ms: 800 });
      const controller = new AbortController();
      const request = stack.service
        .get('/v1/ticker/BTC', { headers: v2Header(payment), signal: controller.signal })
        .catch((error: unknown) => error);
      for (let waited = 0; proxy.calls.filter((call) => call === method).length === seen;) {
        if ((waited += 10) > 15_000) throw new Error(`${method} was never called`);
        await sleep(10);
      }
      controller.abort();
      const outcome = await request;
      await sleep(1500);
      proxy.clear();
      return outcome;
    }

    it('before it: while the gas is estimated → nothing sent, nothing charged, the payment usable again', async () => {
      const payment = await identifiedPayment(stack, '/v1/ticker/BTC', `order_${Date.now()}_gas`);
      const before = await stack.balances();
      const sent = sends(proxy);
      expect(await leaveDuring('eth_estimateGas', payment)).toMatchObject({ name: 'AbortError' });
      expect(sends(proxy)).toBe(sent);
      expect(await stack.balances()).toEqual(before);
      const later = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
      expect(later.status).toBe(200);
      expect((await stack.balances()).payTo).toBe(before.payTo + PRICE);
    });

    it('after it: while the transaction is sent → sent and charged; its payment-identifier fetches the 200', async () => {
      const payment = await identifiedPayment(stack, '/v1/ticker/BTC', `order_${Date.now()}_send`);
      const before = await stack.balances();
      expect(await leaveDuring('eth_sendRawTransaction', payment)).toMatchObject({
        name: 'AbortError',
      });
      expect(await stack.balances()).toEqual({
        buyer: before.buyer - PRICE,
        payTo: before.payTo + PRICE,
      });
      const retry = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
      expect(retry.status).toBe(200);
      expect(await stack.balances()).toEqual({
        buyer: before.buyer - PRICE,
        payTo: before.payTo + PRICE,
      });
    });
  });

  describe('someone else uses the signed authorization while the handler runs', () => {
    it('the price reached us by a transaction this request did not send → 502 naming it, then known settled; never a 402 or a second 200', async () => {
      const accepted = await requirementFor(stack, '/v1/ticker/BTC');
      const payment = await signedPayment(stack.buyer.account, accepted);
      const intermediary = new EmbeddedFacilitatorClient(
        stack.chain.accounts[2]!,
        stack.chain.rpcUrl,
        'eip155:84532',
        EVERY_EMBEDDED_SCHEME,
        { receiptMaxWaitMs: 20 },
      );
      handler.mockImplementationOnce(async function (
        this: TickersController,
        ...args: Parameters<TickersController['getTicker']>
      ) {
        const settled = await intermediary.settle(payment, accepted);
        expect(settled.success).toBe(true);
        return getTicker.apply(this, args);
      } as unknown as TickersController['getTicker']);
      const before = await stack.balances();
      const response = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
      // Another instance serving the same payment looks the same from here: a 200 could serve
      // it twice, a 402 would hide that the price moved.
      expect(response.status).toBe(502);
      expect(await responseJson(response)).toMatchObject({
        code: 'settlement_unknown',
        detail: expect.stringMatching(/0x[0-9a-f]{64}/) as string,
      });
      expect(await stack.balances()).toEqual({
        buyer: before.buyer - PRICE,
        payTo: before.payTo + PRICE,
      });
      await untilKnownSettled(stack, '/v1/ticker/BTC', payment);
    });
  });

  describe('payment-identifier', () => {
    it('a stored response is not served to a copy with a corrupted signature', async () => {
      const id = `order_${Date.now()}_corrupted-copy`;
      const payment = await identifiedPayment(stack, '/v1/ticker/BTC', id);
      const first = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
      expect(first.status).toBe(200);
      const signature = payment.payload.signature as string;
      const flipped = `${signature.slice(0, -2)}${signature.endsWith('00') ? '01' : '00'}`;
      const corrupted = { ...payment, payload: { ...payment.payload, signature: flipped } };
      const response = await stack.service.get('/v1/ticker/BTC', {
        headers: v2Header(corrupted),
      });
      expect(response.status).toBe(409);
      expect(await responseJson(response)).toMatchObject({ code: 'payment_id_conflict' });
      expect(await responseJson(response).catch(() => ({}))).not.toHaveProperty('price');
    });
  });
});

describe('money path, an unknown settlement the chain shows can never happen', () => {
  let stack: PaidApp;
  let proxy: RpcProxy;

  beforeAll(async () => {
    ({ stack, proxy } = await startBehindProxy());
  });

  afterAll(async () => {
    await stack.close();
    await proxy.close();
  });

  it('502 while it could still settle; once the chain passes validBefore unused, a retry gets a 402 and nothing moved', async () => {
    const id = `order_${Date.now()}_never-sent`;
    const payment = await identifiedPayment(stack, '/v1/ticker/BTC', id);
    const before = await stack.balances();
    proxy.fail('eth_sendRawTransaction', { kind: 'error' });
    const response = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
    proxy.clear();
    expect(response.status).toBe(502);
    const retried = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
    expect(retried.status).toBe(502);
    expect(await responseJson(retried)).toMatchObject({ code: 'settlement_unknown' });

    // The chain moves past the authorization's validBefore without it being used.
    await anvil(stack, 'evm_increaseTime', [600]);
    await anvil(stack, 'evm_mine');
    let answer: Response | undefined;
    for (const until = Date.now() + 20_000; answer === undefined;) {
      const again = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
      if (again.status !== 502) answer = again;
      else if (Date.now() > until) throw new Error('never resolved as not settled');
      else await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(answer.status).toBe(402);
    expect((await responseJson(answer)).error).toMatch(/valid_before|simulation_failed/);
    expect(await stack.balances()).toEqual(before);
  });
});

describe('money path, verification deadline', () => {
  let stack: PaidApp;
  let proxy: RpcProxy;

  beforeAll(async () => {
    ({ stack, proxy } = await startBehindProxy({ X402_VERIFY_TIMEOUT_MS: '1000' }));
  });

  afterAll(async () => {
    await stack.close();
    await proxy.close();
  });

  it('a chain that does not answer before anything is sent → 503 at the verification deadline, nothing moved, payment usable', async () => {
    const accepted = await requirementFor(stack, '/v1/ticker/BTC');
    const payment = await signedPayment(stack.buyer.account, accepted);
    const before = await stack.balances();
    proxy.fail('*', { kind: 'silence' });
    const started = Date.now();
    const response = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
    const waited = Date.now() - started;
    proxy.clear();
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await responseJson(response)).toMatchObject({ code: 'facilitator_unavailable' });
    expect(waited).toBeLessThan(10_000);
    expect(await stack.balances()).toEqual(before);
    const retried = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
    expect(retried.status).toBe(200);
    expect(await stack.balances()).toEqual({
      buyer: before.buyer - PRICE,
      payTo: before.payTo + PRICE,
    });
  });
});

/** A facilitator over HTTP whose settlement answer the test chooses; verification is real. */
class ScriptedFacilitator implements FacilitatorClient {
  settleAnswer: ((real: () => Promise<SettleResponse>) => Promise<SettleResponse>) | undefined;

  constructor(private readonly real: EmbeddedFacilitatorClient) {}

  verify: FacilitatorClient['verify'] = (payload, requirements) =>
    this.real.verify(payload, requirements);

  settle: FacilitatorClient['settle'] = (payload, requirements) => {
    const real = () => this.real.settle(payload, requirements);
    return this.settleAnswer === undefined ? real() : this.settleAnswer(real);
  };

  getSupported: FacilitatorClient['getSupported'] = () => this.real.getSupported();
}

describe('money path, remote facilitator checked against the chain (X402_RPC_URL)', () => {
  let stack: PaidApp;
  let server: FacilitatorServer;
  let facilitator: ScriptedFacilitator;

  beforeAll(async () => {
    stack = await startPaidApp({
      env: { X402_FACILITATOR: 'remote' },
      beforeApp: async (chain) => {
        facilitator = new ScriptedFacilitator(
          new EmbeddedFacilitatorClient(
            chain.accounts[0]!,
            chain.rpcUrl,
            'eip155:84532',
            EVERY_EMBEDDED_SCHEME,
            {
              receiptMaxWaitMs: 20,
            },
          ),
        );
        server = await FacilitatorServer.start(facilitator);
        return { X402_FACILITATOR_URL: server.url, X402_RPC_URL: chain.rpcUrl };
      },
    });
  });

  afterEach(() => {
    facilitator.settleAnswer = undefined;
  });

  afterAll(async () => {
    await stack.close();
    await server.close();
  });

  it('pays normally, the receipt confirming the facilitator', async () => {
    const before = await stack.balances();
    const response = await stack.buyer.fetchV2(`${stack.service.url}/v1/ticker/BTC`);
    expect(response.status).toBe(200);
    expect(await stack.balances()).toEqual({
      buyer: before.buyer - PRICE,
      payTo: before.payTo + PRICE,
    });
  });

  it('a "success" naming a transaction that moved nothing → 502 settlement_unknown, no body', async () => {
    const unrelated = (await stack.chain.publicClient.getBlock({ blockTag: 'latest' }))
      .transactions[0];
    expect(unrelated).toBeDefined();
    facilitator.settleAnswer = () =>
      Promise.resolve({
        success: true,
        transaction: unrelated!,
        network: 'eip155:84532',
        payer: stack.buyer.account.address,
      });
    const accepted = await requirementFor(stack, '/v1/ticker/ETH');
    const payment = await signedPayment(stack.buyer.account, accepted);
    const before = await stack.balances();
    const response = await stack.service.get('/v1/ticker/ETH', { headers: v2Header(payment) });
    expect(response.status).toBe(502);
    const problem = await responseJson(response);
    expect(problem).toMatchObject({ code: 'settlement_unknown' });
    expect(problem).not.toHaveProperty('price');
    expect(problem.detail).toMatch(/settlement_unproven/);
    expect(await stack.balances()).toEqual(before);
  });

  it('a failure that carries a transaction → 502 settlement_unknown (it may have been sent)', async () => {
    facilitator.settleAnswer = async (real) => ({
      ...(await real()),
      success: false,
      errorReason: 'invalid_exact_evm_transaction_failed',
    });
    const accepted = await requirementFor(stack, '/v1/ticker/SOL');
    const payment = await signedPayment(stack.buyer.account, accepted);
    const before = await stack.balances();
    const response = await stack.service.get('/v1/ticker/SOL', { headers: v2Header(payment) });
    expect(response.status).toBe(502);
    expect(await responseJson(response)).toMatchObject({ code: 'settlement_unknown' });
    // The facilitator did settle: the money moved, and the payment is never taken again.
    expect(await stack.balances()).toEqual({
      buyer: before.buyer - PRICE,
      payTo: before.payTo + PRICE,
    });
    // Never taken again: unknown until the reconciler proves the transfer, then already used.
    await untilKnownSettled(stack, '/v1/ticker/SOL', payment);
    expect(await stack.balances()).toEqual({
      buyer: before.buyer - PRICE,
      payTo: before.payTo + PRICE,
    });
  });

  it('a refusal while the chain shows the authorization used → 502, then known settled; never a reusable 402', async () => {
    facilitator.settleAnswer = async (real) => {
      const settled = await real();
      return {
        success: false,
        errorReason: 'invalid_exact_evm_insufficient_balance',
        transaction: '',
        network: settled.network,
      };
    };
    const accepted = await requirementFor(stack, '/v1/ticker/BTC');
    const payment = await signedPayment(stack.buyer.account, accepted);
    const before = await stack.balances();
    const response = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
    expect(response.status).toBe(502);
    expect(await responseJson(response)).toMatchObject({ code: 'settlement_unknown' });
    expect(await stack.balances()).toEqual({
      buyer: before.buyer - PRICE,
      payTo: before.payTo + PRICE,
    });
    await untilKnownSettled(stack, '/v1/ticker/BTC', payment);
  });
  it('a pending answer, then a refusal from another replica → 502 (it was sent), reconciled once mined', async () => {
    const accepted = await requirementFor(stack, '/v1/ticker/ETH');
    const payment = await signedPayment(stack.buyer.account, accepted);
    const before = await stack.balances();
    let calls = 0;
    let firstAttempt: Promise<unknown> = Promise.resolve();
    facilitator.settleAnswer = async (real) => {
      calls += 1;
      if (calls > 1) {
        // another replica, without the first one's pending store, re-checks and refuses
        return {
          success: false,
          errorReason: 'invalid_exact_evm_payload_authorization_valid_before',
          transaction: '',
          network: 'eip155:84532',
        };
      }
      await anvil(stack, 'evm_setAutomine', [false]);
      firstAttempt = real().catch(() => undefined);
      let pending: string | undefined;
      while (pending === undefined) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        const block = (await anvil(stack, 'eth_getBlockByNumber', ['pending', false])) as {
          transactions: string[];
        };
        pending = block.transactions[0];
      }
      return {
        success: false,
        errorReason: 'settlement_pending',
        transaction: pending,
        network: 'eip155:84532',
      };
    };
    try {
      const response = await stack.service.get('/v1/ticker/ETH', { headers: v2Header(payment) });
      expect(calls).toBe(2);
      expect(response.status).toBe(502);
      expect(await responseJson(response)).toMatchObject({ code: 'settlement_unknown' });
    } finally {
      await anvil(stack, 'evm_mine');
      await anvil(stack, 'evm_setAutomine', [true]);
      await firstAttempt;
    }
    const moved = { buyer: before.buyer - PRICE, payTo: before.payTo + PRICE };
    expect(await stack.balances()).toEqual(moved);
    await untilKnownSettled(stack, '/v1/ticker/ETH', payment);
    expect(await stack.balances()).toEqual(moved);
  });
});
