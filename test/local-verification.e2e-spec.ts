/**
 * With the embedded facilitator, an `exact` payment is verified without the facilitator's verify
 * (SellerExactScheme): its signature is recovered here and the token is asked, in one `eth_call`,
 * whether it would execute the transfer now. What the facilitator's simulated transfer refused
 * before the handler is still refused there (402, nothing moved, the handler never runs).
 */
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { eip3009ABI } from '@x402/evm';
import { createWalletClient, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { spyOnHandler } from './support/handler-spy.js';
import { requirementFor, startPaidApp, type PaidApp } from './support/paid-app.js';
import { fundedBuyer, type Buyer } from './support/paying-clients.js';
import { RpcProxy } from './support/rpc-proxy.js';
import { startApp, type RunningApp } from './support/test-app.js';
import { paymentRequiredOf, signedPayment, v2Header } from './support/x402-payloads.js';
import { STRANDED_TRANSACTION_SWEEP_SECONDS } from './support/chain.js';
import type { ExactEvmAuthorization } from '../src/payments/schemes/exact/payment-acceptance.js';
import { transferWithAuthorizationArgs } from '../src/chain/eip3009-authorization.js';
import { TickersController } from '../src/tickers/tickers.controller.js';

const PRICE = 2000n;
const { spy: handler, original: getTicker } = spyOnHandler<TickersController['getTicker']>(
  TickersController.prototype,
  'getTicker',
);

afterAll(() => {
  handler.mockRestore();
});

describe('local verification: a transfer the token would refuse', () => {
  let stack: PaidApp;
  let proxy: RpcProxy | undefined;

  beforeAll(async () => {
    stack = await startPaidApp({
      // A nonce gap is never mined, however long the deadline: this one only bounds how long a
      // failing test waits. 4 s once ran out in CI for an honest settlement (under 0.3 s here).
      env: { X402_SETTLE_TIMEOUT_MS: '8000' },
      // honest payments settle concurrently from one key
      intervalMiningSeconds: STRANDED_TRANSACTION_SWEEP_SECONDS,
      beforeApp: async (chain) => {
        proxy = await RpcProxy.start(chain.rpcUrl);
        return { X402_RPC_URL: proxy.url };
      },
    });
  });

  afterAll(async () => {
    await stack.close();
    await proxy?.close();
  });

  it('an honest payment is not checked a second time at settlement: one transaction, no code read', async () => {
    const accepted = await requirementFor(stack, '/v1/ticker/BTC');
    const [first, buyer] = await Promise.all([fundedBuyer(stack.chain), fundedBuyer(stack.chain)]);
    // the first settlement reads the token's code, remembered for a quarter of an hour
    expect(await statusesOfPayments(stack, [first], accepted)).toEqual([200]);
    const before = await stack.balances();
    const from = proxy!.calls.length;
    expect(await statusesOfPayments(stack, [buyer], accepted)).toEqual([200]);
    const asked = proxy!.calls.slice(from);
    expect((await stack.balances()).payTo - before.payTo).toBe(PRICE);
    // the SDK's settlement would verify the signature again, reading the payer's code first
    expect(asked).not.toContain('eth_getCode');
    expect(asked.filter((method) => method === 'eth_sendRawTransaction')).toHaveLength(1);
  });

  it('an unfunded payer is refused before the handler, and honest payments beside it are all paid', async () => {
    const accepted = await requirementFor(stack, '/v1/ticker/BTC');
    const honest = await Promise.all([0, 1, 2].map(() => fundedBuyer(stack.chain)));
    const before = await stack.balances();
    const calls = handler.mock.calls.length;
    // a real RPC takes tens of ms to prepare a transaction; loopback anvil about one
    proxy!.fail('eth_fillTransaction', { kind: 'delay', ms: 150 });
    const answers: Promise<{ who: 'unfunded' | 'honest'; status: number; reason?: string }>[] = [];
    for (const buyer of honest) {
      const bad = await signedPayment(privateKeyToAccount(generatePrivateKey()), accepted);
      const good = await signedPayment(buyer.account, accepted);
      answers.push(
        stack.service.get('/v1/ticker/BTC', { headers: v2Header(bad) }).then((response) => ({
          who: 'unfunded',
          status: response.status,
          reason: paymentRequiredOf(response).error,
        })),
        new Promise((resolve) => setTimeout(resolve, 40))
          .then(() => stack.service.get('/v1/ticker/BTC', { headers: v2Header(good) }))
          .then((response) => ({ who: 'honest', status: response.status })),
      );
    }
    const settled = await Promise.all(answers);
    proxy!.clear();
    expect(settled.filter(({ who }) => who === 'unfunded')).toEqual(
      Array(3).fill({
        who: 'unfunded',
        status: 402,
        reason: expect.stringMatching(/insufficient_balance|simulation_failed/) as string,
      }),
    );
    expect(settled.filter(({ who }) => who === 'honest').map(({ status }) => status)).toEqual([
      200, 200, 200,
    ]);
    expect(handler.mock.calls.length - calls).toBe(3);
    expect((await stack.balances()).payTo - before.payTo).toBe(3n * PRICE);
    // nothing of the settling key waits in the pool behind a nonce that was never sent
    expect(await waitingTransactions(stack)).toEqual([0, 0]);
  });

  it('a payer drained while the handler runs is refused at settlement before a nonce is taken; honest payments beside it are paid', async () => {
    const accepted = await requirementFor(stack, '/v1/ticker/BTC');
    const honest = await Promise.all([0, 1, 2].map(() => fundedBuyer(stack.chain)));
    const payer = privateKeyToAccount(generatePrivateKey());
    await stack.chain.mintUsdc(payer.address, PRICE);
    const bad = await signedPayment(payer, accepted);
    // a second authorization of the same funds, to someone else, sent by a third party
    const drain = await signedPayment(payer, accepted, {
      to: privateKeyToAccount(generatePrivateKey()).address,
    });
    let drained: () => void = () => undefined;
    const drainedOnce = new Promise<void>((resolve) => {
      drained = resolve;
    });
    // Nest awaits what a handler returns: an async stand-in runs the drain, then the handler
    handler.mockImplementationOnce(async function (
      this: TickersController,
      ...args: Parameters<TickersController['getTicker']>
    ) {
      await transferWithAuthorization(stack, drain);
      drained();
      return getTicker.apply(this, args);
    } as unknown as TickersController['getTicker']);
    const before = await stack.balances();
    // a real RPC takes tens of ms to estimate or fill a transaction; loopback anvil about one
    proxy!.fail('eth_estimateGas', { kind: 'delay', ms: 150 });
    proxy!.fail('eth_fillTransaction', { kind: 'delay', ms: 150 });
    const refused = stack.service.get('/v1/ticker/BTC', { headers: v2Header(bad) });
    await drainedOnce;
    const paid = statusesOfPayments(stack, honest, accepted);
    const [answer, statuses] = await Promise.all([refused, paid]);
    proxy!.clear();
    expect(answer.status).toBe(402);
    expect(paymentRequiredOf(answer).error).toMatch(/^settlement_failed: /);
    expect(statuses).toEqual([200, 200, 200]);
    expect((await stack.balances()).payTo - before.payTo).toBe(3n * PRICE);
    expect(await waitingTransactions(stack)).toEqual([0, 0]);
  });

  it('a contract payer whose signature holds only in a free simulation is refused at the real fee, before a nonce is taken', async () => {
    const accepted = await requirementFor(stack, '/v1/ticker/BTC');
    const honest = await Promise.all([0, 1, 2].map(() => fundedBuyer(stack.chain)));
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    // isValidSignature (any call): the ERC-1271 magic value when tx.gasprice is 0, else revert
    await stack.chain.publicClient.request({
      method: 'anvil_setCode' as never,
      params: [wallet, '0x3a15600957600080fd5b631626ba7e60e01b60005260206000f3'] as never,
    });
    await stack.chain.mintUsdc(wallet, PRICE);
    const signed = await signedPayment(privateKeyToAccount(generatePrivateKey()), accepted);
    const bad = structuredClone(signed);
    (bad.payload as { authorization: { from: string } }).authorization.from = wallet;
    const before = await stack.balances();
    // an RPC without eth_fillTransaction, and slow to estimate
    proxy!.fail('eth_fillTransaction', { kind: 'error' });
    proxy!.fail('eth_estimateGas', { kind: 'delay', ms: 150 });
    const refused = stack.service.get('/v1/ticker/BTC', { headers: v2Header(bad) });
    await new Promise((resolve) => setTimeout(resolve, 60));
    const paid = statusesOfPayments(stack, honest, accepted);
    const [answer, statuses] = await Promise.all([refused, paid]);
    proxy!.clear();
    expect(answer.status).toBe(402);
    expect(statuses).toEqual([200, 200, 200]);
    expect((await stack.balances()).payTo - before.payTo).toBe(3n * PRICE);
    expect(await stack.chain.usdcBalance(wallet)).toBe(PRICE);
    expect(await waitingTransactions(stack)).toEqual([0, 0]);
  });
});

/**
 * Each buyer pays for one ticker at once; the answers' statuses, each one other than 200 with
 * its body, so that a failure says why the payment was not served.
 */
function statusesOfPayments(
  stack: PaidApp,
  buyers: readonly Buyer[],
  accepted: PaymentRequirements,
): Promise<Array<number | string>> {
  return Promise.all(
    buyers.map(async (buyer) => {
      const payment = await signedPayment(buyer.account, accepted);
      const answer = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
      if (answer.status === 200) return 200;
      const state = await settlingKeyState(stack).catch(
        (error: unknown) => `settling key unreadable: ${String(error)}`,
      );
      return `${answer.status} ${await answer.text()} (${state})`;
    }),
  );
}

/**
 * The settling key's nonces, mined and pending, and its transactions in the chain's pool by
 * nonce: what tells a nonce gap (a queued transaction, never mined) from a slow block.
 */
async function settlingKeyState(stack: PaidApp): Promise<string> {
  // startPaidApp settles with the chain's first key; no suite here sets another
  const settler = privateKeyToAccount(stack.chain.accounts[0]!).address;
  const client = stack.chain.publicClient;
  const [mined, pending, pool] = await Promise.all([
    client.getTransactionCount({ address: settler, blockTag: 'latest' }),
    client.getTransactionCount({ address: settler, blockTag: 'pending' }),
    client.request<{
      Method: 'txpool_inspect';
      Parameters: [];
      ReturnType: Record<'pending' | 'queued', Record<string, Record<string, string>>>;
    }>({ method: 'txpool_inspect', params: [] }),
  ]);
  const ofSettler = (entries: Record<string, Record<string, string>>): string[] =>
    Object.entries(entries)
      .filter(([address]) => address.toLowerCase() === settler.toLowerCase())
      .flatMap(([, byNonce]) => Object.keys(byNonce));
  return (
    `settling key: nonce ${mined} mined, ${pending} pending; in the pool, pending nonces ` +
    `[${ofSettler(pool.pending).join(', ')}], queued [${ofSettler(pool.queued).join(', ')}]`
  );
}

/** Transactions waiting in the chain's pool: pending, and queued behind a missing nonce. */
async function waitingTransactions(stack: PaidApp): Promise<[number, number]> {
  const pool = await stack.chain.publicClient.request<{
    Method: 'txpool_status';
    Parameters: [];
    ReturnType: { pending: string; queued: string };
  }>({ method: 'txpool_status', params: [] });
  return [Number(pool.pending), Number(pool.queued)];
}

/** Submits a signed EIP-3009 authorization from a third party's account. */
async function transferWithAuthorization(stack: PaidApp, payment: PaymentPayload): Promise<void> {
  const { authorization, signature } = payment.payload as {
    authorization: ExactEvmAuthorization;
    signature: `0x${string}`;
  };
  const relayer = createWalletClient({
    account: privateKeyToAccount(stack.chain.accounts[2]!),
    chain: stack.chain.publicClient.chain,
    transport: http(stack.chain.rpcUrl),
  });
  const hash = await relayer.writeContract({
    address: stack.chain.usdcAddress,
    abi: eip3009ABI,
    functionName: 'transferWithAuthorization',
    args: transferWithAuthorizationArgs(authorization, signature),
  });
  await stack.chain.publicClient.waitForTransactionReceipt({ hash });
}

describe('local verification: a settled payment presented where the ledger forgot it', () => {
  let stack: PaidApp;
  let restarted: RunningApp;

  beforeAll(async () => {
    stack = await startPaidApp();
    // a second process on the same chain with its own (empty) in-memory ledger: a restart
    restarted = await startApp({
      ...stack.markets.env(),
      X402_FACILITATOR: 'embedded',
      X402_NETWORK: 'base-sepolia',
      X402_PAY_TO: stack.payTo,
      X402_SETTLER_PRIVATE_KEY: stack.chain.accounts[1]!,
      X402_RPC_URL: stack.chain.rpcUrl,
      X402_RECEIPT_POLL_MS: '20',
    });
    await restarted.refresh();
  });

  afterAll(async () => {
    await restarted.close();
    await stack.close();
  });

  it('is refused (402), under a new payment-identifier too, and is paid once', async () => {
    const accepted = await requirementFor(stack, '/v1/ticker/BTC');
    const payment = await signedPayment(stack.buyer.account, accepted);
    const before = await stack.balances();
    const first = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
    expect(first.status).toBe(200);

    const replay = {
      ...payment,
      extensions: appendPaymentIdentifierToExtensions(
        { 'payment-identifier': { info: { required: false } } },
        'replay_0123456789abcdef',
      ),
    };
    const calls = handler.mock.calls.length;
    for (const presented of [payment, replay]) {
      const answer = await restarted.get('/v1/ticker/BTC', { headers: v2Header(presented) });
      expect(answer.status).toBe(402);
      expect(paymentRequiredOf(answer).error).toMatch(/nonce_already_used|simulation_failed/);
    }
    // refused in verification: the handler never ran for them
    expect(handler.mock.calls.length).toBe(calls);
    const after = await stack.balances();
    expect(before.buyer - after.buyer).toBe(PRICE);
    expect(after.payTo - before.payTo).toBe(PRICE);
  });
});
