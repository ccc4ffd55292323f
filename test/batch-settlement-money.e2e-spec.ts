/**
 * Batch settlement when something goes wrong with the money: a payer who withdraws the escrow,
 * a channel record the server lost, a deposit slower than the request's deadline. Bought by the
 * official `@x402/fetch` client with the SDK's batch-settlement client scheme, against the app
 * with its embedded facilitator on a local anvil; every total is read back from the chain.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { signVoucher } from '@x402/evm/batch-settlement/client';
import type { ChannelStorage } from '@x402/evm/batch-settlement/server';
import { createWalletClient, http, publicActions, type Hex } from 'viem';
import type { ChannelConfig } from '../src/payments/schemes/batch-settlement/batch-acceptance.js';
import { BatchChannels } from '../src/payments/schemes/batch-settlement/batch-channels.js';
import {
  batchBuyer,
  voucherHeader,
  WITHDRAW_ABI,
  type BatchBuyer,
  CLAIMS_BY_HAND,
  channelOnChain,
} from './support/batch-channel.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { parseExposition, sampleValue, type Sample } from './support/prometheus.js';
import { startApp, type RunningApp } from './support/test-app.js';
import { paymentRequiredOf } from './support/x402-payloads.js';

const PRICE = 2000n;
const TICKER = '/v1/ticker/BTC';
/** Deposits of 10 ticker calls: a buyer's 1 USDC pays for many, a lost one included. */
const TEN_CALL_DEPOSITS = { X402_BATCH_MIN_DEPOSIT: '0.02' } as const;

describe('batch settlement: money when something goes wrong', () => {
  let stack: PaidApp;
  let dataDir: string;
  let storage: ChannelStorage;
  let channels: BatchChannels;

  /** A buyer with USDC, and ETH when `key` is one of anvil's funded accounts. */
  const newBuyer = (key?: Hex): Promise<BatchBuyer> =>
    batchBuyer(stack.chain, { depositMultiplier: 10, ...(key === undefined ? {} : { key }) });

  function lastVoucher(buyer: BatchBuyer): {
    channelConfig: ChannelConfig;
    voucher: { channelId: Hex; maxClaimableAmount: string };
  } {
    const last = buyer.sent.at(-1)?.payload as
      | { channelConfig: ChannelConfig; voucher: { channelId: Hex; maxClaimableAmount: string } }
      | undefined;
    if (last === undefined) throw new Error('the buyer sent no voucher');
    return last;
  }

  async function onChain(channelId: Hex): Promise<{ balance: bigint; totalClaimed: bigint }> {
    return channelOnChain(stack.chain, channelId);
  }

  async function scrape(): Promise<Sample[]> {
    const response = await fetch(`${stack.service.url}/metrics`);
    expect(response.status).toBe(200);
    return parseExposition(await response.text());
  }

  async function buy(buyer: BatchBuyer, times: number): Promise<void> {
    for (let i = 0; i < times; i += 1) {
      const answer = await buyer.fetch(`${stack.service.url}${TICKER}`);
      expect(answer.status).toBe(200);
    }
  }

  /** The payer's own transaction on the channel contract: start or finish a withdrawal. */
  async function asPayer(
    buyer: BatchBuyer,
    step: 'initiateWithdraw' | 'finalizeWithdraw',
  ): Promise<void> {
    const wallet = createWalletClient({
      account: buyer.account,
      chain: stack.chain.publicClient.chain,
      transport: http(stack.chain.rpcUrl),
      pollingInterval: 10,
    }).extend(publicActions);
    const { channelConfig, voucher } = lastVoucher(buyer);
    const { balance, totalClaimed } = await onChain(voucher.channelId);
    const hash =
      step === 'initiateWithdraw'
        ? await wallet.writeContract({
            address: stack.chain.batchSettlementAddress,
            abi: WITHDRAW_ABI,
            functionName: step,
            args: [channelConfig, balance - totalClaimed],
          })
        : await wallet.writeContract({
            address: stack.chain.batchSettlementAddress,
            abi: WITHDRAW_ABI,
            functionName: step,
            args: [channelConfig],
          });
    expect((await wallet.waitForTransactionReceipt({ hash })).status).toBe('success');
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'x402-batch-money-'));
    stack = await startPaidApp({
      // only the explicit claims below touch the chain after a deposit
      env: {
        X402_BATCH_DATA_DIR: dataDir,
        ...CLAIMS_BY_HAND,
        ...TEN_CALL_DEPOSITS,
      },
    });
    channels = stack.service.app.get(BatchChannels);
    storage = channels.channels();
  });

  afterAll(async () => {
    await stack.service.close();
    await stack.markets.close();
    await stack.chain.stop();
  });

  it('refuses a voucher that adds less than the price over the claimed total on a channel the server forgot, and takes the right one', async () => {
    const buyer = await newBuyer();
    await buy(buyer, 2);
    const { channelConfig, voucher } = lastVoucher(buyer);
    await channels.claimAndSettle();
    expect((await onChain(voucher.channelId)).totalClaimed).toBe(2n * PRICE);
    // the record is lost (or was deleted by a refund): only the chain remembers the channel
    await storage.updateChannel(voucher.channelId, () => undefined);
    const balances = await stack.balances();

    const challenge = paymentRequiredOf(await fetch(`${stack.service.url}${TICKER}`));
    const accepted = challenge.accepts.find((offer) => offer.scheme === 'batch-settlement')!;
    const oneUnit = await signVoucher(
      buyer.account,
      voucher.channelId,
      (2n * PRICE + 1n).toString(),
      accepted.network,
    );
    const underpaid = await fetch(`${stack.service.url}${TICKER}`, {
      headers: {
        'payment-signature': voucherHeader(accepted, channelConfig, oneUnit),
      },
    });
    expect(underpaid.status).toBe(402);
    const refusal = paymentRequiredOf(underpaid);
    expect(refusal.error).toContain('cumulative_amount_mismatch');
    const corrected = refusal.accepts.find((offer) => offer.scheme === 'batch-settlement');
    expect(corrected?.extra['channelState']).toMatchObject({
      chargedCumulativeAmount: (2n * PRICE).toString(),
      totalClaimed: (2n * PRICE).toString(),
    });
    // remembered at the claimed total: nothing charged for the refused voucher
    expect(await storage.get(voucher.channelId)).toMatchObject({
      chargedCumulativeAmount: (2n * PRICE).toString(),
    });

    // the buyer's client signs the claimed total plus the price, and that is sold
    await buy(buyer, 1);
    expect(lastVoucher(buyer).voucher.maxClaimableAmount).toBe((3n * PRICE).toString());
    await channels.claimAndSettle();
    expect((await onChain(voucher.channelId)).totalClaimed).toBe(3n * PRICE);
    expect((await stack.balances()).payTo - balances.payTo).toBe(PRICE);
  });

  it('answers a voucher presented again under its payment-identifier with the answer it bought, charged once, and counts each sale once in the revenue metric', async () => {
    const buyer = await newBuyer();
    await buy(buyer, 1);
    const before = await scrape();
    const { channelConfig, voucher } = lastVoucher(buyer);
    const challenge = paymentRequiredOf(await fetch(`${stack.service.url}${TICKER}`));
    const accepted = challenge.accepts.find((offer) => offer.scheme === 'batch-settlement')!;
    const next = await signVoucher(
      buyer.account,
      voucher.channelId,
      (2n * PRICE).toString(),
      accepted.network,
    );
    const header = (id: string) => voucherHeader(accepted, channelConfig, next, id);
    const id = 'pay_batch_retry_0001';
    const first = await fetch(`${stack.service.url}${TICKER}`, {
      headers: { 'payment-signature': header(id) },
    });
    expect(first.status).toBe(200);
    const bought = await first.text();

    // the answer was lost on the way: the client sends the same payment again
    const again = await fetch(`${stack.service.url}${TICKER}`, {
      headers: { 'payment-signature': header(id) },
    });
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(bought);
    expect(again.headers.get('payment-response')).toBe(first.headers.get('payment-response'));
    // without its id it is just a stale voucher
    const bare = await fetch(`${stack.service.url}${TICKER}`, {
      headers: {
        'payment-signature': voucherHeader(accepted, channelConfig, next),
      },
    });
    expect(bare.status).toBe(402);
    expect((await storage.get(voucher.channelId))?.chargedCumulativeAmount).toBe(
      (2n * PRICE).toString(),
    );
    // the same id on another voucher is a conflict, not a free answer
    const other = await fetch(`${stack.service.url}/v1/ticker/ETH`, {
      headers: { 'payment-signature': header(id) },
    });
    expect(other.status).toBe(409);

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>): number =>
      sampleValue(after, name, labels) - sampleValue(before, name, labels);
    const route = { route: '/v1/ticker/:symbol' };
    expect(delta('x402_revenue_atomic_total', { ...route, scheme: 'batch-settlement' })).toBe(
      Number(PRICE),
    );
    expect(delta('x402_payments_total', { ...route, outcome: 'settled' })).toBe(1);
    expect(delta('x402_payments_total', { ...route, outcome: 'refused' })).toBe(1);
  });

  it('refuses every voucher on a channel whose payer started a withdrawal', async () => {
    const buyer = await newBuyer(stack.chain.accounts[7]);
    await buy(buyer, 1);
    const { voucher } = lastVoucher(buyer);
    await channels.claimAndSettle();
    await asPayer(buyer, 'initiateWithdraw');
    // the server reads a channel's state from the chain at most once a minute: age it
    await storage.updateChannel(voucher.channelId, (current) =>
      current === undefined ? current : { ...current, onchainSyncedAt: 0 },
    );

    const refused = await buyer.fetch(`${stack.service.url}${TICKER}`);
    expect(refused.status).toBe(402);
    expect(paymentRequiredOf(refused).error).toContain('withdrawal_pending');
    expect((await storage.get(voucher.channelId))?.chargedCumulativeAmount).toBe(PRICE.toString());
    expect(await channels.claimAndSettle()).toMatchObject({ vouchers: 0, parked: [] });
  });

  it('keeps claiming every other channel when the chain refuses one channel’s vouchers, and sets that one aside', async () => {
    const withdrawing = await newBuyer(stack.chain.accounts[8]);
    const honest = await newBuyer();
    await buy(withdrawing, 3);
    await buy(honest, 2);
    const payerChannel = lastVoucher(withdrawing).voucher.channelId;
    const honestChannel = lastVoucher(honest).voucher.channelId;
    // the payer takes the escrow back before the seller claims: its vouchers can never be paid
    await asPayer(withdrawing, 'initiateWithdraw');
    await stack.chain.publicClient.request({
      method: 'evm_increaseTime' as never,
      params: [901] as never,
    });
    await stack.chain.publicClient.request({ method: 'evm_mine' as never, params: [] as never });
    await asPayer(withdrawing, 'finalizeWithdraw');
    expect(await onChain(payerChannel)).toEqual({ balance: 0n, totalClaimed: 0n });
    const balances = await stack.balances();

    const round = await channels.claimAndSettle();
    expect(round.parked).toEqual([payerChannel]);
    expect(round.settled).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await onChain(honestChannel)).totalClaimed).toBe(2n * PRICE);
    expect((await stack.balances()).payTo - balances.payTo).toBe(2n * PRICE);

    // set aside: it sells nothing more (its vouchers could not be paid either), and the next
    // rounds do not stumble on it again
    const unpaid = await withdrawing.fetch(`${stack.service.url}${TICKER}`);
    expect(unpaid.status).toBe(402);
    expect(paymentRequiredOf(unpaid).error).toContain('channel_set_aside');
    await buy(honest, 1);
    expect(await channels.claimAndSettle()).toMatchObject({ vouchers: 1, parked: [] });
    expect((await onChain(honestChannel)).totalClaimed).toBe(3n * PRICE);
  });
});

describe('batch settlement: a deposit slower than X402_SETTLE_TIMEOUT_MS', () => {
  let stack: PaidApp;
  let slow: RunningApp;
  let dataDir: string;

  beforeAll(async () => {
    stack = await startPaidApp();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'x402-batch-slow-'));
    slow = await startApp({
      ...stack.markets.env(),
      X402_NETWORK: 'base-sepolia',
      X402_PAY_TO: stack.payTo,
      X402_SETTLER_PRIVATE_KEY: stack.chain.accounts[0]!,
      X402_RPC_URL: stack.chain.rpcUrl,
      X402_RECEIPT_POLL_MS: '20',
      X402_SETTLE_TIMEOUT_MS: '1000',
      X402_BATCH_DATA_DIR: dataDir,
      ...CLAIMS_BY_HAND,
      ...TEN_CALL_DEPOSITS,
    });
    await slow.refresh();
  });

  afterAll(async () => {
    await slow.close();
    await stack.service.close();
    await stack.markets.close();
    await stack.chain.stop();
  });

  it('answers settlement_unknown, and when the deposit lands after all the unanswered call is not charged', async () => {
    const { fetch: buyer, sent } = await batchBuyer(stack.chain, { depositMultiplier: 10 });
    const storage = slow.app.get(BatchChannels).channels();
    const rpc = (method: string, params: unknown[] = []) =>
      stack.chain.publicClient.request({ method: method as never, params: params as never });

    await rpc('evm_setAutomine', [false]);
    let gaveUp: Response;
    try {
      gaveUp = await buyer(`${slow.url}${TICKER}`);
    } finally {
      await rpc('evm_setAutomine', [true]);
    }
    expect(gaveUp.status).toBe(502);
    expect(await gaveUp.json()).toMatchObject({ code: 'settlement_unknown' });
    const channelId = (sent[0]?.payload as { voucher: { channelId: Hex } }).voucher.channelId;

    // the deposit lands now; its call was never answered, so its price comes off the charge
    await rpc('evm_mine');
    let record = await storage.get(channelId);
    for (let i = 0; i < 200 && (record === undefined || record.balance === '0'); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      record = await storage.get(channelId);
    }
    expect(record?.balance).not.toBe('0');
    for (let i = 0; i < 200 && record?.chargedCumulativeAmount !== '0'; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      record = await storage.get(channelId);
    }
    expect(record?.chargedCumulativeAmount).toBe('0');

    const balances = await stack.balances();
    const answered = await buyer(`${slow.url}${TICKER}`);
    expect(answered.status).toBe(200);
    await slow.app.get(BatchChannels).claimAndSettle();
    const { totalClaimed } = await channelOnChain(stack.chain, channelId);
    expect(totalClaimed).toBe(PRICE);
    expect((await stack.balances()).payTo - balances.payTo).toBe(PRICE);
  });
});
