/**
 * The chain calls a batch-settlement buyer costs the service, counted at a JSON-RPC proxy between
 * the app and anvil while the official client (`@x402/fetch` with the SDK's batch-settlement
 * scheme) buys: none per voucher, and per deposit only the reads the deposit's checks need, the
 * send and its receipt.
 */
import { batchBuyer, CLAIMS_BY_HAND } from './support/batch-channel.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { RpcProxy } from './support/rpc-proxy.js';

const TICKER = '/v1/ticker/BTC';
/** The client deposits ten prices: one deposit, then nine vouchers on it. */
const CALLS_PER_DEPOSIT = 10;
/** The fee estimate (reused for a second, so not read per deposit at this pace). */
const FEE_READS = new Set(['eth_getBlockByNumber', 'eth_maxPriorityFeePerGas', 'eth_blockNumber']);

describe('batch settlement: chain calls per deposit and per voucher', () => {
  let stack: PaidApp;
  let proxy: RpcProxy | undefined;

  beforeAll(async () => {
    stack = await startPaidApp({
      env: CLAIMS_BY_HAND,
      beforeApp: async (chain) => {
        proxy = await RpcProxy.start(chain.rpcUrl);
        return { X402_RPC_URL: proxy.url };
      },
    });
  }, 120_000);

  // the app first: it claims at shutdown, through the proxy
  afterAll(async () => {
    await stack.close();
    await proxy?.close();
  });

  /** The chain calls since the last look, by method, fee reads left out. */
  function callsSince(): string[] {
    if (proxy === undefined) throw new Error('no proxy');
    const methods = proxy.requests.splice(0).map(({ method }) => method);
    return methods.filter((method) => !FEE_READS.has(method)).sort();
  }

  async function buy(fetchPaid: typeof fetch): Promise<void> {
    const answer = await fetchPaid(`${stack.service.url}${TICKER}`);
    expect(answer.status).toBe(200);
  }

  it('a deposit makes seven chain calls and its receipt polls, its vouchers none', async () => {
    const first = await batchBuyer(stack.chain, { depositMultiplier: CALLS_PER_DEPOSIT });
    callsSince();
    await buy(first.fetch);
    expect(first.sent[0]?.payload).toMatchObject({ type: 'deposit' });
    callsSince();
    for (let call = 1; call < CALLS_PER_DEPOSIT; call += 1) await buy(first.fetch);
    expect(first.sent.slice(1).map(({ payload }) => payload['type'])).toEqual(
      Array.from({ length: CALLS_PER_DEPOSIT - 1 }, () => 'voucher'),
    );
    // nine paid calls on the channel: no chain call at all (claims are made by hand here)
    expect(callsSince()).toEqual([]);

    const second = await batchBuyer(stack.chain, { depositMultiplier: CALLS_PER_DEPOSIT });
    callsSince();
    await buy(second.fetch);
    expect(second.sent[0]?.payload).toMatchObject({ type: 'deposit' });
    const receipts = (calls: string[]) =>
      calls.filter((method) => method === 'eth_getTransactionReceipt').length;
    const calls = callsSince();
    // polled until mined: at least once
    expect(receipts(calls)).toBeGreaterThanOrEqual(1);
    expect(calls.filter((method) => method !== 'eth_getTransactionReceipt')).toEqual([
      // verify and again at settlement: the channel's state and the payer's balance (one
      // Multicall3 call), the deposit simulated; the channel's state once mined
      'eth_call',
      'eth_call',
      'eth_call',
      'eth_call',
      'eth_call',
      'eth_estimateGas',
      'eth_sendRawTransaction',
    ]);
  }, 120_000);
});
