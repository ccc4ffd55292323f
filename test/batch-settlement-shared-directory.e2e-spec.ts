/**
 * Batch settlement without Redis, with built services as real processes on one anvil: a channel
 * directory belongs to one process. A second instance pointed at a directory a live one holds
 * refuses to start (two writers of one journal would each sell the same voucher); after the
 * holder is killed with SIGKILL, a new process takes the directory over, replays its journal and
 * sells on the same channel, and the claims pay exactly the price of every 200 served, by both.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Hex } from 'viem';
import { BUILD_TIMEOUT_MS, ServiceProcess, buildIfStale } from './support/built-service.js';
import {
  batchBuyer,
  batchServiceEnv,
  channelOnChain,
  type BatchBuyer,
} from './support/batch-channel.js';
import { startLocalChain, type LocalChain } from './support/chain.js';
import { FakeMarkets } from './support/fake-markets.js';

const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as const;
const PRICE = 2000n;

describe('batch settlement: one process per channel directory', () => {
  let chain: LocalChain;
  let markets: FakeMarkets;
  let dataDir: string;
  const services: ServiceProcess[] = [];

  function envOf(settlerIndex: number): Record<string, string> {
    return batchServiceEnv(chain, markets, { payTo: PAY_TO, settlerIndex, dataDir });
  }

  async function start(settlerIndex: number): Promise<ServiceProcess> {
    const service = await ServiceProcess.start(envOf(settlerIndex));
    services.push(service);
    await service.ready();
    return service;
  }

  async function buy(buyer: BatchBuyer, service: ServiceProcess, calls: number): Promise<void> {
    for (let i = 0; i < calls; i += 1) {
      const answer = await buyer.fetch(`${service.url}/v1/ticker/BTC`);
      expect(answer.status).toBe(200);
    }
  }

  beforeAll(async () => {
    await buildIfStale();
    chain = await startLocalChain();
    markets = await FakeMarkets.start();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'x402-shared-channels-'));
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    for (const service of services) await service.stop('SIGKILL');
    await markets.close();
    await chain.stop();
  });

  it('refuses a second instance on a held directory; after a SIGKILL the next one takes it over and every 200 is claimed once', async () => {
    const first = await start(0);
    const buyer = await batchBuyer(chain);
    await buy(buyer, first, 3);

    await expect(ServiceProcess.start(envOf(1))).rejects.toThrow(/one process per data directory/);
    // the holder was not disturbed
    await buy(buyer, first, 1);

    await first.stop('SIGKILL');
    const second = await start(1);
    await buy(buyer, second, 2);

    const channelId = (buyer.sent[0]?.payload as { voucher: { channelId: Hex } }).voucher.channelId;
    const sold = 6n * PRICE;
    for (const until = Date.now() + 20_000; ;) {
      const { totalClaimed } = await channelOnChain(chain, channelId);
      expect(totalClaimed <= sold).toBe(true);
      if (totalClaimed === sold) break;
      if (Date.now() > until) throw new Error(`claimed ${String(totalClaimed)} of ${String(sold)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }, 120_000);
});
