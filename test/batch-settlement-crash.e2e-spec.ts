/**
 * Batch settlement through crashes: the built service as a real process, channels in its
 * directory, its chain calls through an RPC proxy that holds its transactions back. The service is
 * killed with SIGKILL while its claim or its settle transaction is on the way (the transaction
 * lands after it died), or right after it recorded a voucher, before the buyer got the answer.
 * A new process takes the directory over, sells on the same channel, claims again, and the seller
 * ends up paid exactly the price of every 200 served: nothing lost, nothing twice; the buyer who
 * lost an answer gets it under its payment-identifier without paying again.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { signVoucher } from '@x402/evm/batch-settlement/client';
import type { Hex } from 'viem';
import type { ChannelConfig } from '../src/payments/schemes/batch-settlement/batch-acceptance.js';
import { BUILD_TIMEOUT_MS, ServiceProcess, buildIfStale } from './support/built-service.js';
import {
  batchBuyer,
  batchServiceEnv,
  CHANNEL_VIEWS_ABI,
  channelOnChain,
  voucherHeader,
  type BatchBuyer,
} from './support/batch-channel.js';
import { startLocalChain, type LocalChain } from './support/chain.js';
import { FakeMarkets } from './support/fake-markets.js';
import { RpcProxy } from './support/rpc-proxy.js';
import { paymentRequiredOf } from './support/x402-payloads.js';

const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as const;
const PRICE = 2000n;
const TICKER = '/v1/ticker/BTC';

/**
 * A TCP proxy in front of the service that hands the buyer nothing back: at the first byte of
 * the service's answer (written only once the voucher is recorded) it calls `onAnswer` and cuts
 * the buyer's connection, as a crash there would.
 */
async function answerCutter(
  target: string,
  onAnswer: () => void,
): Promise<Server & { url: string }> {
  const { hostname, port } = new URL(target);
  const server = createServer((buyer: Socket) => {
    const service = connect(Number(port), hostname);
    buyer.pipe(service);
    service.once('data', () => {
      onAnswer();
      buyer.destroy();
      service.destroy();
    });
    buyer.on('error', () => undefined);
    service.on('error', () => buyer.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: own } = server.address() as { port: number };
  return Object.assign(server, { url: `http://127.0.0.1:${own}` });
}

describe('batch settlement: crashes', () => {
  let chain: LocalChain;
  let markets: FakeMarkets;
  let proxy: RpcProxy;
  const services: ServiceProcess[] = [];

  /** The service with channels in `dataDir`, settling with anvil account `settlerIndex`. */
  async function start(settlerIndex: number, dataDir: string): Promise<ServiceProcess> {
    const service = await ServiceProcess.start(
      batchServiceEnv(chain, markets, { payTo: PAY_TO, settlerIndex, dataDir, rpcUrl: proxy.url }),
    );
    services.push(service);
    await service.ready();
    return service;
  }

  async function buy(buyer: BatchBuyer, service: ServiceProcess, calls: number): Promise<void> {
    for (let i = 0; i < calls; i += 1) {
      expect((await buyer.fetch(`${service.url}/v1/ticker/BTC`)).status).toBe(200);
    }
  }

  async function until(what: string, done: () => Promise<boolean>): Promise<void> {
    for (const deadline = Date.now() + 30_000; !(await done());) {
      if (Date.now() > deadline) throw new Error(`never: ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  beforeAll(async () => {
    await buildIfStale();
    chain = await startLocalChain();
    markets = await FakeMarkets.start();
    proxy = await RpcProxy.start(chain.rpcUrl);
  }, BUILD_TIMEOUT_MS);

  afterEach(async () => {
    for (const service of services.splice(0)) await service.stop('SIGKILL');
    proxy.clear();
  });

  afterAll(async () => {
    await proxy.close();
    await markets.close();
    await chain.stop();
  });

  const sentTransactions = (): number =>
    proxy.calls.filter((call) => call === 'eth_sendRawTransaction').length;

  /** Until the seller was paid exactly `sold` through `channelId`, claimed and settled. */
  async function paidExactly(channelId: Hex, sold: bigint, paidBefore: bigint): Promise<void> {
    await until('every 200 claimed and settled to the seller', async () => {
      const { totalClaimed } = await channelOnChain(chain, channelId);
      const [claimed, settled] = await chain.publicClient.readContract({
        address: chain.batchSettlementAddress,
        abi: CHANNEL_VIEWS_ABI,
        functionName: 'receivers',
        args: [PAY_TO, chain.usdcAddress],
      });
      expect(totalClaimed <= sold && claimed - settledBefore <= sold).toBe(true);
      return totalClaimed === sold && settled - settledBefore === sold;
    });
    expect((await chain.usdcBalance(PAY_TO)) - paidBefore).toBe(sold);
  }

  let settledBefore = 0n;
  beforeEach(async () => {
    [, settledBefore] = await chain.publicClient.readContract({
      address: chain.batchSettlementAddress,
      abi: CHANNEL_VIEWS_ABI,
      functionName: 'receivers',
      args: [PAY_TO, chain.usdcAddress],
    });
  });

  it.each([
    // a round sends its claim, then its settle: the one held back is the one the kill falls in
    { held: 'claim', settlers: [0, 1], skip: 0 },
    { held: 'settle', settlers: [2, 3], skip: 1 },
  ])(
    'loses no voucher and pays nothing twice when killed while its $held is on the way',
    async ({ settlers, skip }) => {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'x402-crash-channels-'));
      const paidBefore = await chain.usdcBalance(PAY_TO);
      const first = await start(settlers[0]!, dataDir);
      const buyer = await batchBuyer(chain);
      await buy(buyer, first, 3);
      // let any round already under way finish, so the next one is the round killed
      await new Promise((resolve) => setTimeout(resolve, 1_500));

      // the held transaction of the next round reaches the chain 3 s late, after the kill
      proxy.fail('eth_sendRawTransaction', { kind: 'delay', ms: 3_000 }, skip);
      const sentBefore = sentTransactions();
      await buy(buyer, first, 1);
      await until('a claim round sends the held transaction', () =>
        Promise.resolve(sentTransactions() > sentBefore + skip),
      );
      await first.stop('SIGKILL');
      proxy.clear();

      const second = await start(settlers[1]!, dataDir);
      await buy(buyer, second, 2);
      const channelId = (buyer.sent[0]?.payload as { voucher: { channelId: Hex } }).voucher
        .channelId;
      await paidExactly(channelId, 6n * PRICE, paidBefore);
      expect(second.logs).not.toMatch(/refused the vouchers|left out of claims/);
    },
    120_000,
  );

  it('answers a voucher whose answer a kill -9 took under its payment-identifier, charged once', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'x402-crash-channels-'));
    const paidBefore = await chain.usdcBalance(PAY_TO);
    const first = await start(6, dataDir);
    const buyer = await batchBuyer(chain);
    await buy(buyer, first, 2);

    // the next voucher, signed by hand under a payment-identifier
    const last = buyer.sent.at(-1)!.payload as {
      channelConfig: ChannelConfig;
      voucher: { channelId: Hex };
    };
    const { channelConfig } = last;
    const { channelId } = last.voucher;
    const challenge = paymentRequiredOf(await first.get(TICKER));
    const accepted = challenge.accepts.find((offer) => offer.scheme === 'batch-settlement')!;
    /** Pays the cumulative `amount` on the buyer's channel, under the payment-identifier `id`. */
    const paying = async (amount: bigint, id?: string): Promise<RequestInit> => {
      const voucher = await signVoucher(buyer.account, channelId, String(amount), accepted.network);
      return {
        headers: { 'payment-signature': voucherHeader(accepted, channelConfig, voucher, id) },
      };
    };
    const id = 'pay_crash_retry_00001';

    // killed as its answer leaves (the voucher recorded): the buyer gets no byte of it
    const cutter = await answerCutter(first.url, () => void first.stop('SIGKILL'));
    try {
      await expect(fetch(`${cutter.url}${TICKER}`, await paying(3n * PRICE, id))).rejects.toThrow();
    } finally {
      await new Promise((resolve) => cutter.close(resolve));
    }
    await first.stop('SIGKILL');
    // it died with the voucher recorded, and the id with it
    const records = readFileSync(path.join(dataDir, 'channels.journal'), 'utf8').trim().split('\n');
    expect(JSON.parse(records.at(-1)!)).toMatchObject({
      channel: { chargedCumulativeAmount: String(3n * PRICE), paidCall: { paymentId: id } },
    });

    const second = await start(7, dataDir);
    // the id on another route is not the call the voucher paid for: a stale voucher there
    expect((await second.get('/v1/ticker/ETH', await paying(3n * PRICE, id))).status).toBe(402);
    const retried = await second.get(TICKER, await paying(3n * PRICE, id));
    expect(retried.status).toBe(200);
    const answer = await retried.text();
    const ticker = JSON.parse(answer) as { currency: string; price: Record<string, number> };
    expect(ticker.currency).toBe('USD');
    expect(ticker.price['BTC']).toBeGreaterThan(0);
    const receipt = decodePaymentResponseHeader(retried.headers.get('payment-response') ?? '');
    expect(receipt).toMatchObject({
      success: true,
      network: accepted.network,
      extra: { channelState: { channelId, chargedCumulativeAmount: (3n * PRICE).toString() } },
    });
    // again: the answer now stored under the id
    const again = await second.get(TICKER, await paying(3n * PRICE, id));
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(answer);
    // the same voucher under another id, or on another route under the id, buys nothing
    expect(
      (await second.get(TICKER, await paying(3n * PRICE, 'pay_crash_other_00001'))).status,
    ).toBe(402);
    expect((await second.get('/v1/ticker/ETH', await paying(3n * PRICE, id))).status).toBe(409);

    // the channel sells on from there: the next voucher adds one price
    const bought = await second.get(TICKER, await paying(4n * PRICE));
    expect(bought.status).toBe(200);
    await paidExactly(channelId, 4n * PRICE, paidBefore);
    expect(second.logs.match(/answered again, charged nothing more/g)).toHaveLength(1);
  }, 120_000);
});
