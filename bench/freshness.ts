/**
 * How old is a served price? Runs the real app against the fake venues on loopback (recorded
 * responses, fresh timestamps) and samples, for every served symbol, the time since its newest
 * contributing observation. Prints the distribution for the default PRICE_REFRESH_MS and, as the
 * baseline in the same process, for a 1 s refresh; then their ratio. Bounded: two 20 s runs.
 *
 *   npm run bench:freshness
 */
import 'reflect-metadata';
import { PriceRefreshService } from '../src/aggregation/price-refresh.service.js';
import { SNAPSHOT_STORE, type SnapshotStore } from '../src/aggregation/snapshot-store.js';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/app-config.js';
import { FakeMarkets } from '../test/support/fake-markets.js';

const RUN_MS = 20_000;
const SAMPLE_EVERY_MS = 100;

interface AgeStats {
  readonly samples: number;
  readonly p50: number;
  readonly p95: number;
  readonly max: number;
}

async function measure(refreshMs: number): Promise<AgeStats> {
  const markets = await FakeMarkets.start();
  const config = loadConfig({
    ...markets.env(),
    PRICE_REFRESH_MS: String(refreshMs),
    X402_PAY_TO: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    X402_FACILITATOR: 'embedded',
    X402_SETTLER_PRIVATE_KEY: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
    X402_RPC_URL: 'http://127.0.0.1:9',
  });
  const app = await createApp({ config, logger: false });
  await app.init();
  await app.get(PriceRefreshService).refresh();
  const store = app.get<SnapshotStore>(SNAPSHOT_STORE);
  const ages: number[] = [];
  const until = Date.now() + RUN_MS;
  while (Date.now() < until) {
    const snapshot = await store.current();
    const now = Date.now();
    for (const price of snapshot?.prices.values() ?? []) ages.push(now - price.observedAt);
    await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS));
  }
  await app.close();
  await markets.close();
  return stats(ages);
}

function stats(ages: number[]): AgeStats {
  const sorted = [...ages].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { samples: sorted.length, p50: at(0.5), p95: at(0.95), max: sorted.at(-1) ?? 0 };
}

function line(label: string, s: AgeStats): string {
  return `${label.padEnd(28)} p50 ${String(s.p50).padStart(5)} ms   p95 ${String(s.p95).padStart(5)} ms   max ${String(s.max).padStart(5)} ms   (${s.samples} samples)`;
}

const defaults = loadConfig({ X402_PAY_TO: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' }).pricing
  .refreshMs;
const baseline = await measure(1000);
const current = await measure(defaults);
console.log('Age of served prices (time since the newest contributing observation):');
console.log(line('baseline: 1 s refresh', baseline));
console.log(line(`default: ${defaults} ms refresh`, current));
console.log(
  `ratio default/baseline: p50 ${(current.p50 / baseline.p50).toFixed(2)}x, p95 ${(current.p95 / baseline.p95).toFixed(2)}x`,
);
