/**
 * Paid calls with the `batch-settlement` scheme, bought by the official `@x402/fetch` client with
 * the SDK's batch-settlement client scheme, against the app with its embedded facilitator on a
 * local anvil (the project's channel contract and deposit collector at the SDK's addresses).
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { signVoucher } from '@x402/evm/batch-settlement/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { BatchChannels } from '../src/payments/schemes/batch-settlement/batch-channels.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { USDC } from './support/paying-clients.js';
import { startApp } from './support/test-app.js';
import { paymentRequiredOf } from './support/x402-payloads.js';
import {
  batchBuyer,
  type BatchBuyer,
  CLAIMS_BY_HAND,
  channelOnChain,
} from './support/batch-channel.js';

const TICKER_PRICE = 2000n;

describe('batch settlement: paid calls without a chain round trip', () => {
  let stack: PaidApp;
  let dataDir: string;
  let serviceUrl: string;
  let closeService: () => Promise<void>;
  let channels: BatchChannels;

  const newBuyer = (): Promise<BatchBuyer> => batchBuyer(stack.chain, { depositMultiplier: 10 });

  async function channel(channelId: `0x${string}`) {
    return channelOnChain(stack.chain, channelId);
  }

  function channelIdOf(buyer: BatchBuyer): `0x${string}` {
    const first = buyer.sent[0]?.payload as { voucher?: { channelId?: `0x${string}` } } | undefined;
    const id = first?.voucher?.channelId;
    if (id === undefined) throw new Error('the buyer sent no voucher');
    return id;
  }

  async function batchRequirement(pathname: string): Promise<PaymentRequirements> {
    const challenge = await fetch(`${serviceUrl}${pathname}`);
    const found = paymentRequiredOf(challenge).accepts.find(
      (accept) => accept.scheme === 'batch-settlement',
    );
    if (found === undefined) throw new Error('no batch-settlement offer');
    return found;
  }

  async function pay(payload: PaymentPayload): Promise<Response> {
    return fetch(`${serviceUrl}/v1/ticker/BTC`, {
      headers: { 'payment-signature': encodePaymentSignatureHeader(payload) },
    });
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'x402-batch-e2e-'));
    stack = await startPaidApp({
      // only the explicit claims below touch the chain after a deposit
      env: {
        X402_BATCH_DATA_DIR: dataDir,
        ...CLAIMS_BY_HAND,
        // deposits of 10 ticker calls, so a few calls show a top-up
        X402_BATCH_MIN_DEPOSIT: '0.02',
      },
    });
    serviceUrl = stack.service.url;
    closeService = () => stack.service.close();
    channels = stack.service.app.get(BatchChannels);
  });

  afterAll(async () => {
    await closeService();
    await stack.markets.close();
    await stack.chain.stop();
  });

  it('offers exact and batch-settlement for the same price on every paid route', async () => {
    for (const [pathname, price] of [
      ['/v1/ticker/BTC', 2000n],
      ['/v1/tickers/BTC,ETH,SOL', 8000n],
      ['/v1/all-tickers', 10000n],
    ] as const) {
      const challenge = await fetch(`${serviceUrl}${pathname}`);
      expect(challenge.status).toBe(402);
      const { accepts } = paymentRequiredOf(challenge);
      expect(accepts.map((accept) => [accept.scheme, accept.amount, accept.payTo])).toEqual([
        ['exact', price.toString(), stack.payTo],
        ['batch-settlement', price.toString(), stack.payTo],
      ]);
      expect(accepts[1]?.extra).toMatchObject({ withdrawDelay: 900, minDeposit: '20000' });
    }
  });

  it('buys every paid route through one channel; a claim pays X402_PAY_TO exactly N x price and the rest of the deposit stays the buyer’s', async () => {
    const buyer = await newBuyer();
    const before = await stack.balances();
    const paths = [
      ['/v1/ticker/BTC', 2000n],
      ['/v1/tickers/BTC,ETH,SOL', 8000n],
      ['/v1/all-tickers', 10000n],
      ['/v1/ticker/ETH', 2000n],
      ['/v1/ticker/BTC', 2000n],
    ] as const;
    let owed = 0n;
    for (const [pathname, price] of paths) {
      const response = await buyer.fetch(`${serviceUrl}${pathname}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('payment-response')).not.toBeNull();
      owed += price;
    }
    // the seller announces a minimum deposit of 10 ticker calls (20,000): the first three calls
    // use it up exactly, the fourth tops the channel up, the fifth is a voucher again
    expect(buyer.sent.map((sent) => (sent.payload as { type: string }).type)).toEqual([
      'deposit',
      'voucher',
      'voucher',
      'deposit',
      'voucher',
    ]);
    const channelId = channelIdOf(buyer);
    const deposited = (await channel(channelId)).balance;
    expect(deposited).toBeGreaterThanOrEqual(owed);
    // no chain round trip per call: nothing reached X402_PAY_TO yet
    expect(await stack.chain.usdcBalance(stack.payTo)).toBe(before.payTo);
    expect(await stack.chain.usdcBalance(buyer.account.address)).toBe(USDC - deposited);

    await channels.claimAndSettle();
    expect(await stack.chain.usdcBalance(stack.payTo)).toBe(before.payTo + owed);
    expect(await channel(channelId)).toEqual({ balance: deposited, totalClaimed: owed });
  });

  it('refuses a replayed voucher, one over the deposit, one for another channel and one with a forged signature with a 402 naming why', async () => {
    const buyer = await newBuyer();
    expect((await buyer.fetch(`${serviceUrl}/v1/ticker/BTC`)).status).toBe(200);
    expect((await buyer.fetch(`${serviceUrl}/v1/ticker/BTC`)).status).toBe(200);
    const last = buyer.sent.at(-1)!;
    const payments = await stack.balances();

    const replayed = await pay(last);
    expect(replayed.status).toBe(402);
    expect(paymentRequiredOf(replayed).error).toContain('cumulative_amount_mismatch');

    const voucher = (last.payload as { voucher: { channelId: `0x${string}` } }).voucher;
    const requirement = await batchRequirement('/v1/ticker/BTC');
    const next = 3n * TICKER_PRICE;
    const withVoucher = async (
      fields: { channelId: `0x${string}`; maxClaimableAmount: string; signature: `0x${string}` },
      config?: Record<string, unknown>,
    ): Promise<Response> =>
      pay({
        ...last,
        accepted: requirement,
        payload: {
          type: 'voucher',
          channelConfig: config ?? (last.payload as { channelConfig: object }).channelConfig,
          voucher: fields,
        },
      });

    const forged = await signVoucher(
      privateKeyToAccount(generatePrivateKey()),
      voucher.channelId,
      next.toString(),
      requirement.network,
    );
    const forgedAnswer = await withVoucher(forged);
    expect(forgedAnswer.status).toBe(402);
    expect(paymentRequiredOf(forgedAnswer).error).toContain('voucher_signature');

    const otherSalt = `0x${'22'.repeat(32)}`;
    const otherChannel = await withVoucher(
      {
        ...(await signVoucher(
          buyer.account,
          voucher.channelId,
          next.toString(),
          requirement.network,
        )),
      },
      {
        ...(last.payload as { channelConfig: Record<string, unknown> }).channelConfig,
        salt: otherSalt,
      },
    );
    expect(otherChannel.status).toBe(402);
    expect(paymentRequiredOf(otherChannel).error).toContain('channel_id_mismatch');

    // a buyer that skips ahead past its deposit: not the next cumulative amount either
    const deposit = (await channel(voucher.channelId)).balance;
    const over = await signVoucher(
      buyer.account,
      voucher.channelId,
      (deposit + TICKER_PRICE).toString(),
      requirement.network,
    );
    const overAnswer = await withVoucher(over);
    expect(overAnswer.status).toBe(402);
    expect(paymentRequiredOf(overAnswer).error).toMatch(/cumulative/);

    expect(await stack.balances()).toEqual(payments);
    // the channel still works at the right next amount
    expect((await buyer.fetch(`${serviceUrl}/v1/ticker/BTC`)).status).toBe(200);
  });

  it('loses no voucher when the server restarts between calls', async () => {
    const buyer = await newBuyer();
    for (let i = 0; i < 3; i += 1) {
      expect((await buyer.fetch(`${serviceUrl}/v1/ticker/BTC`)).status).toBe(200);
    }
    const channelId = channelIdOf(buyer);
    await stack.service.close();
    const restarted = await startApp({
      ...stack.markets.env(),
      X402_NETWORK: 'base-sepolia',
      X402_PAY_TO: stack.payTo,
      X402_SETTLER_PRIVATE_KEY: stack.chain.accounts[0]!,
      X402_RPC_URL: stack.chain.rpcUrl,
      X402_RECEIPT_POLL_MS: '20',
      X402_BATCH_DATA_DIR: dataDir,
      ...CLAIMS_BY_HAND,
    });
    await restarted.refresh();
    serviceUrl = restarted.url;
    closeService = () => restarted.close();
    channels = restarted.app.get(BatchChannels);

    for (let i = 0; i < 2; i += 1) {
      expect((await buyer.fetch(`${serviceUrl}/v1/ticker/BTC`)).status).toBe(200);
    }
    await channels.claimAndSettle();
    expect((await channel(channelId)).totalClaimed).toBe(5n * TICKER_PRICE);
  });
});
