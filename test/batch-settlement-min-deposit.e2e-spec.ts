/**
 * The deposit the batch offer asks for, as the official client (`@x402/fetch` with the SDK's
 * batch-settlement client scheme, no deposit policy of its own) meets it: one deposit of
 * `extra.minDeposit`, then hundreds of calls paid with vouchers alone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAbiItem } from 'viem';
import { BatchChannels } from '../src/payments/schemes/batch-settlement/batch-channels.js';
import { batchBuyer, CLAIMS_BY_HAND, channelOnChain } from './support/batch-channel.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { USDC } from './support/paying-clients.js';
import { paymentRequiredOf } from './support/x402-payloads.js';

const DEPOSITED = parseAbiItem(
  'event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 balance)',
);
const TICKER_PRICE = 2000n;
/** 500 calls of the cheapest route (USD 0.002): USD 1. */
const DEFAULT_MIN_DEPOSIT = 500n * TICKER_PRICE;

describe('batch settlement: the deposit the offer asks for', () => {
  let stack: PaidApp;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'x402-min-deposit-'));
    stack = await startPaidApp({ env: { ...CLAIMS_BY_HAND, X402_BATCH_DATA_DIR: dataDir } });
  }, 120_000);

  afterAll(async () => {
    await stack.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('announces 500 calls of the cheapest route on every paid route', async () => {
    for (const route of ['/v1/ticker/BTC', '/v1/tickers/BTC,ETH', '/v1/all-tickers']) {
      const batch = paymentRequiredOf(await stack.service.get(route)).accepts.find(
        ({ scheme }) => scheme === 'batch-settlement',
      );
      expect(batch?.extra['minDeposit']).toBe(DEFAULT_MIN_DEPOSIT.toString());
    }
  });

  it('is deposited once by the unmodified official client, which then pays 499 more calls with vouchers alone', async () => {
    const buyer = await batchBuyer(stack.chain);
    const url = `${stack.service.url}/v1/ticker/BTC`;
    const calls = Number(DEFAULT_MIN_DEPOSIT / TICKER_PRICE);
    for (let call = 0; call < calls; call += 1) {
      const answer = await buyer.fetch(url);
      expect(answer.status).toBe(200);
    }
    const kinds = buyer.sent.map(({ payload }) => (payload as { type: string }).type);
    expect(kinds.filter((kind) => kind === 'deposit')).toEqual(['deposit']);
    expect(kinds).toHaveLength(calls);
    expect(kinds[0]).toBe('deposit');

    const channelId = (buyer.sent[0]!.payload as { voucher: { channelId: `0x${string}` } }).voucher
      .channelId;
    const deposits = await stack.chain.publicClient.getLogs({
      address: stack.chain.batchSettlementAddress,
      event: DEPOSITED,
      args: { channelId },
      fromBlock: 0n,
    });
    expect(deposits.map(({ args }) => args.amount)).toEqual([DEFAULT_MIN_DEPOSIT]);
    expect(await channelOnChain(stack.chain, channelId)).toEqual({
      balance: DEFAULT_MIN_DEPOSIT,
      totalClaimed: 0n,
    });
    expect(await stack.chain.usdcBalance(buyer.account.address)).toBe(USDC - DEFAULT_MIN_DEPOSIT);
    // every call was charged: the record is at the deposit, and a claim takes exactly that
    const record = await stack.service.app.get(BatchChannels).channels().get(channelId);
    expect(record?.chargedCumulativeAmount).toBe(DEFAULT_MIN_DEPOSIT.toString());
  }, 240_000);

  it('is refused with the reason when the wallet holds less, nothing charged', async () => {
    const buyer = await batchBuyer(stack.chain, { funds: DEFAULT_MIN_DEPOSIT / 2n });
    const before = await stack.balances();
    const refused = await buyer.fetch(`${stack.service.url}/v1/ticker/BTC`);
    expect(refused.status).toBe(402);
    expect(paymentRequiredOf(refused).error).toContain('insufficient_balance');
    expect(await stack.chain.usdcBalance(buyer.account.address)).toBe(DEFAULT_MIN_DEPOSIT / 2n);
    expect(await stack.balances()).toEqual(before);
  });
});
