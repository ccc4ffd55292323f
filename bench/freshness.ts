/**
 * How fresh is a served price? Runs the real app, with the default settings, against the nine
 * fake venues on loopback (recorded responses, timestamps moved to now) twice in one process:
 * REST polling only (MARKET_STREAMS=none, the baseline) and with the five fake ticker streams
 * (recorded messages, one burst every 250 ms). In each run it measures
 *
 *   - age: every 100 ms, for every served symbol, the time since its newest contributing
 *     observation;
 *   - move-to-served: every 2-3 s (spread, so moves do not lock onto the polling phase) every
 *     venue (REST and stream) moves its prices by +/-1 % at once; the time until the served BTC
 *     price reflects the move.
 *
 * and prints p50 / p95 / max of both, then the streams/REST ratios. Bounded: about a minute.
 *
 *   npm run bench:freshness
 */
import 'reflect-metadata';
import { SNAPSHOT_STORE, type SnapshotStore } from '../src/aggregation/snapshot-store.js';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/app-config.js';
import { FakeMarkets } from '../test/support/fake-markets.js';
import { FakeStreams } from '../test/support/fake-streams.js';

const FIRST_POLLS_MS = 3000;
const MOVES = 14;
/** Moves are 2-3 s apart, spread over that second so they do not lock onto the polling phase. */
const MOVE_GAP_MS = 2000;
const MOVE_JITTER_MS = 1000;
const AGE_SAMPLE_EVERY_MS = 100;
const MOVE_SAMPLE_EVERY_MS = 5;
/** The served price has followed a 1 % move once it has gone more than half the way. */
const MOVE = 0.01;

interface Stats {
  readonly samples: number;
  readonly p50: number;
  readonly p95: number;
  readonly max: number;
}

interface RunResult {
  readonly age: Stats;
  readonly moveToServed: Stats;
  readonly missedMoves: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function measure(streamsOn: boolean): Promise<RunResult> {
  const markets = await FakeMarkets.start();
  const streams = streamsOn ? await FakeStreams.start() : undefined;
  const config = loadConfig({
    ...markets.env(),
    ...streams?.env(),
    X402_PAY_TO: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    X402_FACILITATOR: 'embedded',
    X402_SETTLER_PRIVATE_KEY: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
    X402_RPC_URL: 'http://127.0.0.1:9',
  });
  const app = await createApp({ config, logger: false });
  await app.init();
  const store = app.get<SnapshotStore>(SNAPSHOT_STORE);
  const btc = async () => (await store.current())?.prices.get('BTC')?.price;
  await sleep(FIRST_POLLS_MS);

  const run = { sampling: true };
  const ages: number[] = [];
  const ageSampler = (async () => {
    while (run.sampling) {
      const snapshot = await store.current();
      const now = Date.now();
      for (const price of snapshot?.prices.values() ?? []) ages.push(now - price.observedAt);
      await sleep(AGE_SAMPLE_EVERY_MS);
    }
  })();

  if ((await btc()) === undefined) throw new Error('BTC is not priced after the first polls');
  const latencies: number[] = [];
  let missedMoves = 0;
  for (let move = 1; move <= MOVES; move += 1) {
    const up = move % 2 === 1;
    const factor = up ? 1 + MOVE : 1;
    const before = (await btc()) ?? 0;
    const movedAt = Date.now();
    for (const id of markets.venues.keys()) markets.scale(id, factor);
    for (const stream of streams?.streams.values() ?? []) stream.factor = factor;
    const gap = MOVE_GAP_MS + Math.floor(((move * 0.618034) % 1) * MOVE_JITTER_MS);
    let followedAt: number | undefined;
    while (Date.now() - movedAt < gap) {
      const price = await btc();
      if (price !== undefined && (up ? 1 : -1) * (price - before) > (MOVE / 2) * before) {
        followedAt = Date.now();
        break;
      }
      await sleep(MOVE_SAMPLE_EVERY_MS);
    }
    if (followedAt === undefined) missedMoves += 1;
    else latencies.push(followedAt - movedAt);
    await sleep(Math.max(0, movedAt + gap - Date.now()));
  }
  run.sampling = false;
  await ageSampler;
  await app.close();
  await streams?.close();
  await markets.close();
  return { age: stats(ages), moveToServed: stats(latencies), missedMoves };
}

function stats(values: number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { samples: sorted.length, p50: at(0.5), p95: at(0.95), max: sorted.at(-1) ?? 0 };
}

const ms = (value: number) => `${String(value).padStart(5)} ms`;

function line(label: string, s: Stats): string {
  return `  ${label.padEnd(26)} p50 ${ms(s.p50)}   p95 ${ms(s.p95)}   max ${ms(s.max)}   (${s.samples} samples)`;
}

const ratio = (a: number, b: number) => (b === 0 ? 'n/a' : `${(a / b).toFixed(2)}x`);

const rest = await measure(false);
const streamed = await measure(true);
console.log('Age of served prices (time since the newest contributing observation):');
console.log(line('REST only (baseline)', rest.age));
console.log(line('streams on', streamed.age));
console.log('Move to served (all venues move BTC by 1 %; until the served price follows):');
console.log(line('REST only (baseline)', rest.moveToServed));
console.log(line('streams on', streamed.moveToServed));
if (rest.missedMoves + streamed.missedMoves > 0) {
  console.log(
    `  moves not followed before the next one (${MOVE_GAP_MS}-${MOVE_GAP_MS + MOVE_JITTER_MS} ms): REST ${rest.missedMoves}, streams ${streamed.missedMoves}`,
  );
}
console.log(
  `ratio streams/REST: age p50 ${ratio(streamed.age.p50, rest.age.p50)}, p95 ${ratio(streamed.age.p95, rest.age.p95)}; ` +
    `move-to-served p50 ${ratio(streamed.moveToServed.p50, rest.moveToServed.p50)}, p95 ${ratio(streamed.moveToServed.p95, rest.moveToServed.p95)}`,
);
