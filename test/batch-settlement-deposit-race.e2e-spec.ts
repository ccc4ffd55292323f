/**
 * A top-up deposit that meets a claim round. The official client tops a channel up exactly when
 * its deposit is used up, which is also when a claim round can claim all of it and settle it
 * away: the channel contract's token balance drops to zero between the deposit's gas estimate
 * and its mining. The deposit then writes a zero balance slot again, which costs more gas than
 * was estimated.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isAddressEqual, toFunctionSelector } from 'viem';
import { BatchChannels } from '../src/payments/schemes/batch-settlement/batch-channels.js';
import { batchBuyer, CLAIMS_BY_HAND, channelOnChain } from './support/batch-channel.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { RpcProxy, type RpcCall } from './support/rpc-proxy.js';
import { paymentRequiredOf } from './support/x402-payloads.js';

const DEPOSIT_SELECTOR = toFunctionSelector(
  'deposit((address,address,address,address,address,uint40,bytes32),uint128,address,bytes)',
);

describe('batch settlement: a top-up deposit while a claim round settles the channel away', () => {
  let stack: PaidApp;
  let proxy: RpcProxy;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'x402-deposit-race-'));
    stack = await startPaidApp({
      env: {
        ...CLAIMS_BY_HAND,
        X402_BATCH_DATA_DIR: dataDir,
        // five calls a deposit: the channel runs dry quickly
        X402_BATCH_MIN_DEPOSIT: '0.01',
      },
      beforeApp: async (chain) => {
        proxy = await RpcProxy.start(chain.rpcUrl);
        return { X402_RPC_URL: proxy.url };
      },
    });
  }, 120_000);

  afterAll(async () => {
    await stack.close();
    await proxy.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The app's gas estimate of a deposit into the channel contract. */
  function isDepositEstimate({ method, params }: RpcCall): boolean {
    if (method !== 'eth_estimateGas' || !Array.isArray(params)) return false;
    const [call] = params as { to?: string; data?: string; input?: string }[];
    const data = call?.data ?? call?.input;
    return (
      call?.to !== undefined &&
      isAddressEqual(call.to as `0x${string}`, stack.chain.batchSettlementAddress) &&
      data?.startsWith(DEPOSIT_SELECTOR) === true
    );
  }

  it('is mined and the call sold, though the claim round emptied the channel contract after its gas was estimated', async () => {
    const url = `${stack.service.url}/v1/ticker/BTC`;
    const offer = paymentRequiredOf(await stack.service.get('/v1/ticker/BTC')).accepts.find(
      ({ scheme }) => scheme === 'batch-settlement',
    );
    const price = BigInt(offer!.amount);
    const minDeposit = BigInt(offer!.extra['minDeposit'] as string);
    const callsPerDeposit = Number(minDeposit / price);
    const buyer = await batchBuyer(stack.chain);
    for (let call = 0; call < callsPerDeposit; call += 1) {
      expect((await buyer.fetch(url)).status).toBe(200);
    }
    const channelId = (buyer.sent[0]!.payload as { voucher: { channelId: `0x${string}` } }).voucher
      .channelId;
    expect(await channelOnChain(stack.chain, channelId)).toEqual({
      balance: minDeposit,
      totalClaimed: 0n,
    });

    const estimate = proxy.holdAnswer(isDepositEstimate);
    const topUp = buyer.fetch(url);
    await estimate.reached;
    const round = await stack.service.app.get(BatchChannels).claimAndSettle();
    expect(round.vouchers).toBe(1);
    expect(round.settled).toBeDefined();
    // everything the contract held was this channel's, claimed and settled to X402_PAY_TO
    expect(await stack.chain.usdcBalance(stack.chain.batchSettlementAddress)).toBe(0n);
    estimate.release();

    const answer = await topUp;
    expect(answer.status).toBe(200);
    expect(buyer.sent.map(({ payload }) => (payload as { type: string }).type)).toEqual([
      'deposit',
      ...Array<string>(callsPerDeposit - 1).fill('voucher'),
      'deposit',
    ]);
    expect(await channelOnChain(stack.chain, channelId)).toEqual({
      balance: 2n * minDeposit,
      totalClaimed: minDeposit,
    });
  }, 60_000);
});
