import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { x402Client } from '@x402/fetch';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { RpcProxy } from './support/rpc-proxy.js';

/** One JSON-RPC answer of a `POST /mcp`. */
interface RpcAnswer {
  readonly id?: number | null;
  readonly result?: {
    readonly isError?: boolean;
    readonly structuredContent?: Record<string, unknown>;
    readonly _meta?: Record<string, unknown>;
  };
  readonly error?: { readonly code: number; readonly message: string };
}

const PRICE = 2000n;
const DEADLINE_MS = 2000;
/** Longer than the deadline and its wind-down together: the chain answers after both. */
const CHAIN_DELAY_MS = 4500;
const REQUEST_TIMEOUT = -32001;
/** Past the chain's delay: a delayed receipt still settles; a silenced one is unknown after it. */
const SETTLE_TIMEOUT_MS = 8000;

/**
 * The exchange deadline of `POST /mcp` against a settlement that outlives it: a call whose sale
 * is settling is waited for and answered with its settlement, never replaced by a timeout; a
 * call that has not begun to settle is cancelled and charged nothing. The chain's calls go
 * through an RpcProxy that delays one method.
 */
describe('POST /mcp at its exchange deadline (e2e, local chain)', () => {
  let stack: PaidApp;
  let proxy: RpcProxy;
  let payer: x402Client;

  beforeAll(async () => {
    let started: RpcProxy | undefined;
    stack = await startPaidApp({
      env: {
        X402_SCHEMES: 'exact',
        MCP_EXCHANGE_DEADLINE_MS: String(DEADLINE_MS),
        X402_SETTLE_TIMEOUT_MS: String(SETTLE_TIMEOUT_MS),
      },
      beforeApp: async (chain) => {
        started = await RpcProxy.start(chain.rpcUrl);
        return { X402_RPC_URL: started.url };
      },
    });
    if (started === undefined) throw new Error('the RPC proxy did not start');
    proxy = started;
    payer = new x402Client().register('eip155:*', new ExactEvmScheme(stack.buyer.account));
  }, 120_000);

  afterEach(() => {
    proxy.clear();
  });

  afterAll(async () => {
    await stack.close();
    await proxy.close();
  });

  async function post(body: unknown): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${stack.service.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: response.status, body: await response.json() };
  }

  function toolCall(id: number, payment?: PaymentPayload) {
    return {
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name: 'get_ticker',
        arguments: { symbol: 'BTC' },
        ...(payment === undefined ? {} : { _meta: { 'x402/payment': payment } }),
      },
    };
  }

  async function payment(): Promise<PaymentPayload> {
    const { body } = await post(toolCall(1));
    const required = (body as RpcAnswer).result?.structuredContent as unknown as PaymentRequired;
    return payer.createPaymentPayload(required);
  }

  /** The settled answer of a paid get_ticker: the price, and its settlement in `_meta`. */
  function expectSettledAnswer(answer: RpcAnswer | undefined): void {
    expect(answer?.error).toBeUndefined();
    expect(answer?.result?.isError).toBeFalsy();
    expect(answer?.result?.structuredContent).toMatchObject({
      currency: 'USD',
      price: { BTC: expect.any(Number) as number },
    });
    expect(answer?.result?._meta?.['x402/payment-response']).toMatchObject({
      success: true,
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) as string,
    });
  }

  it('answers a call whose settlement lands after the deadline with its settled 200, charged once', async () => {
    const paid = await payment();
    const before = await stack.balances();
    proxy.fail('eth_getTransactionReceipt', { kind: 'delay', ms: CHAIN_DELAY_MS });
    const { status, body } = await post(toolCall(1, paid));
    expect(status).toBe(200);
    expectSettledAnswer(body as RpcAnswer);
    const after = await stack.balances();
    expect(before.buyer - after.buyer).toBe(PRICE);
    expect(after.payTo - before.payTo).toBe(PRICE);
  }, 60_000);

  it('in a batch, keeps the settled call’s answer and gives the call cancelled at the deadline its timeout', async () => {
    const [first, second] = [await payment(), await payment()];
    const before = await stack.balances();
    proxy.fail('eth_getTransactionReceipt', { kind: 'delay', ms: CHAIN_DELAY_MS });
    const { status, body } = await post([toolCall(1, first), toolCall(2, second)]);
    expect(status).toBe(200);
    const answers = body as RpcAnswer[];
    expect(answers.map((answer) => answer.id).sort()).toEqual([1, 2]);
    expectSettledAnswer(answers.find((answer) => answer.id === 1));
    expect(answers.find((answer) => answer.id === 2)?.error?.code).toBe(REQUEST_TIMEOUT);
    const after = await stack.balances();
    expect(before.buyer - after.buyer).toBe(PRICE);
    expect(after.payTo - before.payTo).toBe(PRICE);
  }, 60_000);

  it('answers settlement_unknown naming the transaction when a settlement in flight at the deadline is never confirmed', async () => {
    const paid = await payment();
    const before = await stack.balances();
    proxy.fail('eth_getTransactionReceipt', { kind: 'silence' });
    const { status, body } = await post(toolCall(1, paid));
    expect(status).toBe(200);
    const { result, error } = body as RpcAnswer;
    expect(error).toBeUndefined();
    expect(result?.isError).toBe(true);
    expect(result?.structuredContent).toMatchObject({
      code: 'settlement_unknown',
      detail: expect.stringMatching(/transaction 0x[0-9a-f]{64}/) as string,
    });
    // the transfer it names left: the buyer paid once, and was told so
    const after = await stack.balances();
    expect(before.buyer - after.buyer).toBe(PRICE);
  }, 60_000);

  it('cancels a call still being verified at the deadline: its timeout at once, nothing charged', async () => {
    const paid = await payment();
    const before = await stack.balances();
    proxy.fail('eth_call', { kind: 'delay', ms: CHAIN_DELAY_MS });
    const started = performance.now();
    const { status, body } = await post(toolCall(1, paid));
    expect(performance.now() - started).toBeLessThan(CHAIN_DELAY_MS);
    expect(status).toBe(200);
    expect((body as RpcAnswer).error?.code).toBe(REQUEST_TIMEOUT);
    // the verification the deadline left behind ends, and sells nothing
    await new Promise((resolve) => setTimeout(resolve, CHAIN_DELAY_MS));
    expect(await stack.balances()).toEqual(before);
  }, 60_000);
});
