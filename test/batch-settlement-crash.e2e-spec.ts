/**
 * Batch settlement through a crash in the middle of a claim round: the built service as a real
 * process, channels in its directory, its chain calls through an RPC proxy that holds its
 * transactions back. The service is killed with SIGKILL while its claim (or settle) transaction
 * is on the way; the transaction lands after it died. A new process takes the directory over,
 * sells on the same channel, claims again, and the seller ends up paid exactly the price of every
 * 200 served: nothing lost, nothing twice.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Hex } from 'viem';
import { BUILD_TIMEOUT_MS, ServiceProcess, buildIfStale } from './support/built-service.js';
import {
  batchBuyer,
  CHANNEL_VIEWS_ABI,
  channelOnChain,
  type BatchBuyer,
} from './support/batch-channel.js';
import { startLocalChain, type LocalChain } from './support/chain.js';
import { FakeMarkets } from './support/fake-markets.js';
import { RpcProxy } from './support/rpc-proxy.js';

const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as const;
const PRICE = 2000n;

describe('batch settlement: a crash during a claim round', () => {
  let chain: LocalChain;
  let markets: FakeMarkets;
  let proxy: RpcProxy;
  let dataDir: string;
  const services: ServiceProcess[] = [];

  async function start(settlerIndex: number): Promise<ServiceProcess> {
    const service = await ServiceProcess.start({
      ...markets.env(),
      X402_FACILITATOR: 'embedded',
      X402_NETWORK: 'base-sepolia',
      X402_SCHEMES: 'exact,batch-settlement',
      X402_PAY_TO: PAY_TO,
      X402_SETTLER_PRIVATE_KEY: chain.accounts[settlerIndex]!,
      X402_BATCH_AUTHORIZER_PRIVATE_KEY: chain.accounts[5]!,
      X402_RPC_URL: proxy.url,
      X402_RECEIPT_POLL_MS: '20',
      X402_BATCH_SETTLE_INTERVAL_MS: '1000',
      X402_BATCH_DATA_DIR: dataDir,
    });
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
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'x402-crash-channels-'));
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    for (const service of services) await service.stop('SIGKILL');
    await proxy.close();
    await markets.close();
    await chain.stop();
  });

  it('loses no voucher and pays nothing twice when killed while its claim is on the way', async () => {
    const paidBefore = await chain.usdcBalance(PAY_TO);
    const first = await start(0);
    const buyer = await batchBuyer(chain);
    await buy(buyer, first, 3);

    // the next transaction (this round's claim or settle) reaches the chain 3 s late
    proxy.fail('eth_sendRawTransaction', { kind: 'delay', ms: 3_000 });
    const sentBefore = proxy.calls.filter((call) => call === 'eth_sendRawTransaction').length;
    await buy(buyer, first, 1);
    await until('a claim round sends its transaction', () =>
      Promise.resolve(
        proxy.calls.filter((call) => call === 'eth_sendRawTransaction').length > sentBefore,
      ),
    );
    await first.stop('SIGKILL');
    proxy.clear();

    const second = await start(1);
    await buy(buyer, second, 2);
    const channelId = (buyer.sent[0]?.payload as { voucher: { channelId: Hex } }).voucher.channelId;
    const sold = 6n * PRICE;
    await until('every 200 claimed and settled to the seller', async () => {
      const { totalClaimed } = await channelOnChain(chain, channelId);
      const [claimed, settled] = await chain.publicClient.readContract({
        address: chain.batchSettlementAddress,
        abi: CHANNEL_VIEWS_ABI,
        functionName: 'receivers',
        args: [PAY_TO, chain.usdcAddress],
      });
      expect(totalClaimed <= sold && claimed <= sold).toBe(true);
      return totalClaimed === sold && settled === sold;
    });
    expect((await chain.usdcBalance(PAY_TO)) - paidBefore).toBe(sold);
    expect(second.logs).not.toMatch(/refused the vouchers|left out of claims/);
  }, 120_000);
});
