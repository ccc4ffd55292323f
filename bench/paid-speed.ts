/**
 * What a request costs: the product (tsc's output on plain `node`, as it ships) against a bare
 * Fastify server answering the product's own bytes, an ordinary NestJS app answering them from a
 * controller (bench/reference-nest.ts), and the official `@x402/express` middleware selling the
 * same route at the same price and settling on the same local chain. Everything runs on loopback:
 * fake venues, anvil with the test USDC, and each server in its own process (bench/targets.ts) so
 * CPU time and RSS are its own. Loads run against each side in alternation, several rounds; ratios
 * are medians of the per-round ratios, so a busy moment on the machine hits both sides alike.
 * The bare server and the Nest app each run as three identical processes, "bare" and "nest" being,
 * each round, the one with the median rate: identical processes differ by up to ~30% for as long
 * as they live, so one is no baseline. For the same reason the free route and the 402 also run
 * against three sold product processes (`product` and its twins `product2`, `product3`, each
 * having settled one payment), "products" being the median one each round; `product` alone still
 * has its own ratio lines, and it alone takes the paid loads.
 * Every paid 200 is checked on chain: its transaction must move exactly the price from the payer
 * to the seller.
 * The free route and the 402 also run against `unsold`: a second product process that never
 * settled a payment, as the product is before its first sale.
 * Each line gives the server's CPU per answer, its kernel part, its garbage collection pauses
 * (which, unlike rates, repeat closely run to run), and this process's own CPU per answer
 * ("clients": the load generator or paying clients, which share the machine's cores).
 *
 * Sections 5 and 6 buy the same route with the `batch-settlement` scheme (one deposit per buyer,
 * then a voucher per call, no chain round trip); the vouchers are claimed every second, and at
 * the end the channel contract must show exactly one price claimed per batch 200. Section 5
 * alternates 1 buyer's batch loop with 1 fetch client's unpaid 402 loop on the same route: the
 * difference of their p50s is what paying adds to the 402 round trip every x402 call makes.
 *
 * Section 7 takes the buyers' work off the clock (ready-section.ts): deposits, vouchers and
 * `exact` authorizations are signed before each timed loop, which only sends ready headers, at 1
 * and at 10 connections, against the unpaid 402 on as many connections: the server's CPU and
 * paid calls per core for each scheme, and what paying adds to the p50.
 *
 * Section 8 (markets-section.ts) buys `/v1/markets` of 25 symbols and `/v1/ticker/BTC` on the
 * same product with ready headers at 1 connection, batch and `exact`: the p50 and server CPU per
 * call of each, and markets minus ticker per round.
 *
 * Section 10 (official-client-section.ts) is the buyer who actually comes: unmodified official
 * clients, as `npm run client` builds them, each a fresh buyer paying every call of
 * BENCH_OFFICIAL_CALLS (default 500) in a row, its 402 probes and deposits included: batch with 1
 * and with 10 clients, `exact` with 1; the server's CPU per call and batch/exact calls per core.
 *
 * Last, the floors the design must keep, each a figure of this run: free route >= 0.7x `nest`
 * (`products/nest`), unpaid 402 >= 2x `express` (`products/express`), a paid call by 1 client at
 * most 2 ms above `express`'s p50, 10 clients >= 1.0x its paid/s, and the product's RSS after the
 * loads <= 250 MB; and for batch settlement at 1 and 10 connections (section 7): the server's CPU
 * per paid call <= 500 µs, >= 10x the paid calls per core of `exact`, p50 <= +2 ms over the 402;
 * and for the official client (section 10): the server's CPU per batch call <= 1.0 ms at 1 and 10
 * clients, batch >= 5x the paid calls per core of `exact`, and no call answered other than 200.
 *
 *   npm run bench   (BENCH_ROUNDS, default 3; BENCH_SECONDS per load, default 3; BENCH_ONLY=1,2;
 *                    BENCH_CPU_PROF=dir for CPU profiles, one per kind of server;
 *                    BENCH_OFFICIAL_CALLS, default 500, and BENCH_OFFICIAL_SECONDS, default 120:
 *                    section 10's calls per client and the time limit of each of its runs;
 *                    BENCH_OFFICIAL_LOADS, default batch1,batch10,exact1: section 10's loads;
 *                    X402_RECEIPT_POLL_MS reaches the product processes)
 */
import 'reflect-metadata';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentRequirements } from '@x402/core/types';
import { decodePaymentResponseHeader } from '@x402/fetch';
import autocannon from 'autocannon';
import { fork, type ChildProcess } from 'node:child_process';
import { execSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { getAddress, parseEventLogs, parseAbi, type Hex } from 'viem';
import {
  startLocalChain,
  STRANDED_TRANSACTION_SWEEP_SECONDS,
  type LocalChain,
} from '../test/support/chain.js';
import { FakeMarkets } from '../test/support/fake-markets.js';
import { fundedBuyer, USDC, type Buyer } from '../test/support/paying-clients.js';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MARKETS_PATH, marketsSection } from './markets-section.js';
import {
  OFFICIAL_LOAD_IDS,
  officialClientSection,
  type OfficialClientFigures,
} from './official-client-section.js';
import { readySection, type ReadyFigures } from './ready-section.js';
import { streamsSection } from './streams-section.js';
import type { RecordedResponse, TargetMessage, TargetSettings } from './targets.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 3);
const PAID_SECONDS = SECONDS + 2;
/**
 * BENCH_ONLY=3,4: only those comparisons (1 free, 2 unpaid, 3 paid by 1 client, 4 by 10, 5 paid
 * with batch settlement by 1 client, 6 by 10, 7 ready payment headers at 1 and 10 connections:
 * the unpaid 402, batch vouchers and `exact`, signed before the clock; 8 paid `/v1/markets` of 25
 * symbols against paid `/v1/ticker/BTC`, ready headers at 1 connection; 9 paid price streams,
 * 100 and 1,000 on one instance, bench/streams-section.ts; 10 the official client paying every
 * call at its own pace, deposits included: batch by 1 and by 10 clients, `exact` by 1).
 */
const ONLY = process.env['BENCH_ONLY']?.split(',').map(Number);
const chosen = (section: number): boolean => ONLY === undefined || ONLY.includes(section);
/** BENCH_SETTLE_SECONDS: after the loads, how long to keep watching RSS (every 5 s, no forced GC). */
const SETTLE_SECONDS = Number(process.env['BENCH_SETTLE_SECONDS'] ?? 0);
const CONNECTIONS = 10;
const OFFICIAL_CALLS = Number(process.env['BENCH_OFFICIAL_CALLS'] ?? 500);
const OFFICIAL_SECONDS = Number(process.env['BENCH_OFFICIAL_SECONDS'] ?? 120);
const OFFICIAL_LOADS = process.env['BENCH_OFFICIAL_LOADS']?.split(',') ?? OFFICIAL_LOAD_IDS;
if (OFFICIAL_LOADS.some((load) => !OFFICIAL_LOAD_IDS.includes(load))) {
  throw new Error(`BENCH_OFFICIAL_LOADS: of ${OFFICIAL_LOAD_IDS.join(', ')}`);
}
const FREE_PATH = '/v1/assets';
const PAID_PATH = '/v1/ticker/BTC';
/**
 * BENCH_AFTER_SALE=free (or 402): one more request to the product after the sale the bench records
 * its paid answer with, so that the sale is not the last request the product served before the
 * loads: a diagnostic of whether the request served last before the loads moves the free route.
 */
const AFTER_SALE = process.env['BENCH_AFTER_SALE'] ?? 'none';
const AFTER_SALE_PATHS: Readonly<Record<string, string | undefined>> = {
  none: undefined,
  free: FREE_PATH,
  402: PAID_PATH,
};
if (!Object.hasOwn(AFTER_SALE_PATHS, AFTER_SALE)) {
  throw new Error('BENCH_AFTER_SALE: none, free or 402');
}
const PAY_TO = getAddress('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
/** Anvil's dev account #9: what the streams section's product is paid to. */
const STREAMS_PAY_TO = getAddress('0xa0Ee7A142d267C1f36714E4a8F75612F20a79720');
const TRANSFER = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);
/** Headers the server writes itself for every response; everything else is replayed. */
const PER_RESPONSE_HEADERS = new Set([
  'date',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
]);

// ---------------------------------------------------------------------------------------------
// the servers, one process each

/** What a server reports of itself: CPU time and memory. */
type Usage = Omit<Extract<TargetMessage, { type: 'usage' }>, 'type'>;

class Target {
  private constructor(
    readonly name: string,
    readonly url: string,
    private readonly child: ChildProcess,
  ) {}

  static async start(name: string, settings: TargetSettings): Promise<Target> {
    const child = fork(fileURLToPath(new URL('./targets.js', import.meta.url)), [settings.kind], {
      env: { ...process.env, BENCH_TARGET: JSON.stringify(settings) },
      // plain node, as the product ships; BENCH_CPU_PROF=dir adds only the profiler's flags
      execArgv: profileArgs(name),
      stdio: [
        'ignore',
        name === 'product' && process.env['BENCH_PRODUCT_LOG'] ? 'inherit' : 'ignore',
        'inherit',
        'ipc',
      ],
    });
    const url = await new Promise<string>((resolve, reject) => {
      child.once('message', (message: TargetMessage) => {
        if (message.type === 'ready') resolve(message.url);
      });
      child.once('exit', (code) => {
        reject(new Error(`${name} exited with ${String(code)} before listening`));
      });
    });
    return new Target(name, url, child);
  }

  usage(): Promise<Usage> {
    return new Promise((resolve) => {
      const onMessage = (message: TargetMessage): void => {
        if (message.type !== 'usage') return;
        this.child.off('message', onMessage);
        resolve(message);
      };
      this.child.on('message', onMessage);
      this.child.send('usage');
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) {
        resolve();
        return;
      }
      this.child.once('exit', () => {
        resolve();
      });
      this.child.disconnect();
    });
  }
}

// ---------------------------------------------------------------------------------------------
// loads

interface Sample {
  /** Answers (with the expected status) per second. */
  readonly rate: number;
  readonly p50: number;
  readonly p99: number;
  /** CPU time of the server process per answer, in µs. */
  readonly cpuPerRequest: number;
  /** The kernel's part of cpuPerRequest. */
  readonly systemPerRequest: number;
  /** The server's garbage collection pauses per answer, in µs (part of cpuPerRequest). */
  readonly gcPerRequest: number;
  /**
   * CPU time of this process per answer: the clients (autocannon, or the paying @x402/fetch
   * clients with their signatures) and the fake venues, which share the machine's cores with the server.
   */
  readonly clientsPerRequest: number;
  readonly answered: number;
}

interface Load {
  readonly label: string;
  readonly unit: string;
  run(target: Target): Promise<Sample>;
}

/**
 * `work` under both CPU clocks. `check` (the on-chain check of the 200s) runs after the clients'
 * clock stopped, so `clients` is what calling cost; the server's clock still covers it, as it
 * always has.
 */
async function measured(
  target: Target,
  work: () => Promise<{ answered: number; rate: number; p50: number; p99: number }>,
  check: () => Promise<void> = () => Promise.resolve(),
): Promise<Sample> {
  const before = await target.usage();
  const clientsBefore = process.cpuUsage();
  const result = await work();
  const clients = process.cpuUsage(clientsBefore);
  await check();
  const after = await target.usage();
  return {
    ...result,
    clientsPerRequest: (clients.user + clients.system) / Math.max(1, result.answered),
    cpuPerRequest: (after.cpuMicros - before.cpuMicros) / Math.max(1, result.answered),
    systemPerRequest: (after.systemMicros - before.systemMicros) / Math.max(1, result.answered),
    gcPerRequest: (after.gcMicros - before.gcMicros) / Math.max(1, result.answered),
  };
}

/** Many connections hammering one route; every answer must have `status`. */
function httpLoad(label: string, path: string, status: 200 | 402): Load {
  return {
    label,
    unit: 'req/s',
    run: (target) =>
      measured(target, async () => {
        const result = await autocannon({
          url: `${target.url}${path}`,
          connections: CONNECTIONS,
          duration: SECONDS,
        });
        const answered = result.statusCodeStats?.[`${status}`]?.count ?? 0;
        const total = result.requests.total;
        if (answered !== total || result.errors > 0) {
          throw new Error(
            `${target.name} ${path}: ${String(answered)} of ${String(total)} answers were ${String(status)}, ${String(result.errors)} errors`,
          );
        }
        return {
          answered,
          rate: answered / result.duration,
          p50: result.latency.p50,
          p99: result.latency.p99,
        };
      }),
  };
}

/**
 * One fetch client asking for `path` without paying, in a loop: the 402 round trip as an x402
 * buyer's first request sees it, timed in fractions of a millisecond (autocannon's latencies are
 * whole milliseconds). The baseline of a batch-settlement paid call, which makes this round trip
 * and then the paid one.
 */
function unpaidLoop(label: string, path: string): Load {
  return {
    label,
    unit: 'req/s',
    run: (target) =>
      measured(target, async () => {
        const latencies: number[] = [];
        const started = performance.now();
        const until = started + PAID_SECONDS * 1000;
        while (performance.now() < until) {
          const sent = performance.now();
          const response = await fetch(`${target.url}${path}`);
          await response.text();
          latencies.push(performance.now() - sent);
          if (response.status !== 402) {
            throw new Error(`${target.name} ${path}: answered ${String(response.status)} unpaid`);
          }
        }
        return loopResult(latencies, started);
      }),
  };
}

/** Rate and percentiles of a client loop that started at `started` and answered `latencies`. */
function loopResult(latencies: number[], started: number) {
  const elapsed = (performance.now() - started) / 1000;
  const sorted = latencies.sort((a, b) => a - b);
  return {
    answered: sorted.length,
    rate: sorted.length / elapsed,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
  };
}

interface Payment {
  readonly payer: Hex;
  readonly transaction: Hex;
}

/** Batch 200s counted per target: the channel contract must show exactly this many prices claimed. */
const batchPaid = new Map<string, number>();
/** Atomic units the batch 200s of other routes than PAID_PATH sold (section 8). */
let batchSoldElsewhere = 0n;

/**
 * `buyers.length` @x402/fetch clients, each paying in a loop. `exact`: every 200 is checked on
 * chain here; `batch`: every 200 is a recorded voucher, counted and checked against the claims
 * at the end (checkBatchClaims).
 */
function paidLoad(
  label: string,
  buyers: readonly Buyer[],
  chain: LocalChain,
  price: bigint,
  scheme: 'exact' | 'batch' = 'exact',
): Load {
  return {
    label,
    unit: 'paid/s',
    run: (target) => {
      const payments: Payment[] = [];
      return measured(
        target,
        async () => {
          const latencies: number[] = [];
          const started = performance.now();
          const until = started + PAID_SECONDS * 1000;
          await Promise.all(
            buyers.map((buyer) => payUntil(until, buyer, target, latencies, payments)),
          );
          if (scheme === 'batch') {
            batchPaid.set(target.name, (batchPaid.get(target.name) ?? 0) + payments.length);
          }
          return loopResult(latencies, started);
        },
        () =>
          scheme === 'exact'
            ? checkOnChain(target.name, chain, payments, price)
            : Promise.resolve(),
      );
    },
  };
}

/** `buyer` pays for the route in a loop until `until`, recording each call's latency and payment. */
async function payUntil(
  until: number,
  buyer: Buyer,
  target: Target,
  latencies: number[],
  payments: Payment[],
): Promise<void> {
  while (performance.now() < until) {
    const sent = performance.now();
    const response = await buyer.fetchV2(`${target.url}${PAID_PATH}`);
    const body = await response.text();
    latencies.push(performance.now() - sent);
    const receipt = response.headers.get('payment-response');
    if (response.status !== 200 || receipt === null) {
      throw new Error(
        `${target.name}: paid request answered ${String(response.status)}: ${body.slice(0, 500)}`,
      );
    }
    const settlement = decodePaymentResponseHeader(receipt);
    payments.push({ payer: buyer.account.address, transaction: settlement.transaction as Hex });
  }
}

/** Each paid 200 has its own transaction, and it moved exactly the price from payer to seller. */
async function checkOnChain(
  name: string,
  chain: LocalChain,
  payments: readonly Payment[],
  price: bigint,
): Promise<void> {
  const transactions = new Set(payments.map((payment) => payment.transaction));
  if (transactions.size !== payments.length) {
    throw new Error(`${name}: ${String(payments.length - transactions.size)} receipts reused`);
  }
  for (const payment of payments) {
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: payment.transaction });
    const transfers = parseEventLogs({ abi: TRANSFER, logs: receipt.logs }).filter(
      (log) => getAddress(log.address) === getAddress(chain.usdcAddress),
    );
    const [transfer] = transfers;
    if (
      receipt.status !== 'success' ||
      transfers.length !== 1 ||
      transfer === undefined ||
      getAddress(transfer.args.from) !== getAddress(payment.payer) ||
      getAddress(transfer.args.to) !== PAY_TO ||
      transfer.args.value !== price
    ) {
      throw new Error(
        `${name}: ${payment.transaction} did not move exactly the price to the seller`,
      );
    }
  }
}

const RECEIVERS = parseAbi([
  'function receivers(address receiver, address token) view returns (uint128 totalClaimed, uint128 totalSettled)',
]);

/** The batch 200s were all claimed and settled to the seller: exactly one price each, no more. */
async function checkBatchClaims(
  chain: LocalChain,
  paid: number,
  price: bigint,
  /** What batch 200s of other routes (section 8) sold, atomic units. */
  elsewhere: bigint,
): Promise<string> {
  const expected = BigInt(paid) * price + elsewhere;
  const until = Date.now() + 30_000;
  for (;;) {
    const [claimed, settled] = await chain.publicClient.readContract({
      address: chain.batchSettlementAddress,
      abi: RECEIVERS,
      functionName: 'receivers',
      args: [PAY_TO, chain.usdcAddress],
    });
    if (claimed > expected) {
      throw new Error(`batch: ${String(claimed)} claimed for ${String(expected)} sold`);
    }
    if (claimed === expected && settled === expected) {
      return `batch settlement: ${String(paid)} paid 200s; ${String(claimed)} claimed and settled to the seller on chain (exactly ${String(paid)} x ${String(price)} + ${String(elsewhere)} of other routes)`;
    }
    if (Date.now() > until) {
      throw new Error(
        `batch: after 30 s ${String(claimed)} claimed, ${String(settled)} settled, ${String(expected)} sold`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** A buyer whose @x402/fetch pays with the batch-settlement client scheme (deposit, then vouchers). */
async function batchBuyer(chain: LocalChain): Promise<Buyer> {
  const buyer = await fundedBuyer(chain, 1000n * USDC);
  const client = new x402Client().register(
    'eip155:*',
    new BatchSettlementEvmScheme(buyer.account, {
      rpcUrl: chain.rpcUrl,
      // a deposit big enough for a whole bench run: the loops measure vouchers
      depositStrategy: () => (100n * USDC).toString(),
    }),
  );
  return { ...buyer, fetchV2: wrapFetchWithPayment(fetch, client) };
}

function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

// ---------------------------------------------------------------------------------------------
// comparisons

/**
 * Identical processes measured as one side named `name`: in each round, the sample of the one
 * with the median rate. Two identical processes differ by up to ~30% on this machine, and for as
 * long as they live, so one process is no baseline, and no measure of a server either.
 */
interface Pool {
  readonly name: string;
  readonly of: readonly Target[];
}

interface Comparison {
  readonly load: Load;
  readonly sides: readonly Target[];
  readonly pools?: readonly Pool[];
  /** [numerator, denominator] names: the ratios printed. */
  readonly ratios: readonly (readonly [string, string])[];
}

/** Median rate and p50 of each side in the comparisons run so far, by load label and side. */
const medians = new Map<string, { rate: number; p50: number }>();
/**
 * Median per-round rate ratio and p50 difference of each ratio printed so far, by load label and
 * `a/b`.
 */
const ratioMedians = new Map<string, { rate: number; p50: number }>();

async function compare({ load, sides, pools = [], ratios }: Comparison): Promise<string[]> {
  for (const side of sides) await load.run(side); // a first run each, not counted
  const samples = new Map<string, Sample[]>(sides.map((side) => [side.name, []]));
  const runsOf = (name: string): Sample[] => required(samples.get(name), name);
  for (let round = 0; round < ROUNDS; round += 1) {
    // Rotate the order so no side always runs first (or right after the heaviest).
    const order = [...sides.slice(round % sides.length), ...sides.slice(0, round % sides.length)];
    for (const side of order) runsOf(side.name).push(await load.run(side));
  }
  const names = sides.map((side) => side.name);
  const members = new Map(pools.map((pool) => [pool, pool.of.map((side) => runsOf(side.name))]));
  for (const [pool, runs] of members) {
    samples.set(
      pool.name,
      Array.from({ length: ROUNDS }, (_, round) =>
        medianByRate(runs.map((member) => required(member[round], pool.name))),
      ),
    );
    names.push(pool.name);
  }
  const lines = [load.label];
  for (const name of names) {
    const runs = runsOf(name);
    medians.set(`${load.label}|${name}`, {
      rate: median(runs.map((s) => s.rate)),
      p50: median(runs.map((s) => s.p50)),
    });
    lines.push(sampleLine(load, name, runs));
  }
  for (const [pool, runs] of members) lines.push(poolSpread(pool.name, runs));
  for (const [a, b] of ratios) {
    const pairs = runsOf(a).map((s, i) => [s, required(runsOf(b)[i], b)] as const);
    const rate = median(pairs.map(([s, t]) => s.rate / t.rate));
    const p50 = median(pairs.map(([s, t]) => s.p50 - t.p50));
    const cpu = median(pairs.map(([s, t]) => s.cpuPerRequest / t.cpuPerRequest));
    ratioMedians.set(`${load.label}|${a}/${b}`, { rate, p50 });
    lines.push(
      `  ${`${a}/${b}`.padEnd(18)} ${load.unit} ${rate.toFixed(2)}x   p50 ${p50 >= 0 ? '+' : ''}${p50.toFixed(1)} ms   CPU/req ${cpu.toFixed(2)}x`,
    );
  }
  return lines;
}

/**
 * Two loads on one server, alternated round by round (the order rotating): a line for each, and
 * the median of the rounds' p50 differences (second minus first).
 */
async function compareLoads(
  [first, second]: readonly [Load, Load],
  side: Target,
): Promise<{ lines: string[]; p50Difference: number }> {
  await first.run(side); // a first run each, not counted
  await second.run(side);
  const runs: [Sample, Sample][] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const [a, b] = round % 2 === 0 ? [first, second] : [second, first];
    const results = new Map([
      [a, await a.run(side)],
      [b, await b.run(side)],
    ]);
    runs.push([
      required(results.get(first), first.label),
      required(results.get(second), second.label),
    ]);
  }
  const lines = [first, second].flatMap((load, i) => {
    const samples = runs.map((pair) => pair[i] as Sample);
    medians.set(`${load.label}|${side.name}`, {
      rate: median(samples.map((s) => s.rate)),
      p50: median(samples.map((s) => s.p50)),
    });
    return [load.label, sampleLine(load, side.name, samples)];
  });
  return { lines, p50Difference: median(runs.map(([a, b]) => b.p50 - a.p50)) };
}

/**
 * One of each in turn (`a1, b1, c1, a2, b2, c2, ...`), so that no pool's processes always run
 * side by side and share the machine's busy moments.
 */
function interleaved<T>(...lists: readonly (readonly T[])[]): T[] {
  const length = Math.max(...lists.map((list) => list.length));
  return Array.from({ length }, (_, i) => lists.map((list) => list[i])).flatMap((row) =>
    row.filter((side): side is T => side !== undefined),
  );
}

/** Of one round's samples of identical processes, the one with the median rate. */
function medianByRate(samples: readonly Sample[]): Sample {
  const sorted = [...samples].sort((a, b) => a.rate - b.rate);
  return required(sorted[Math.floor(sorted.length / 2)], 'a sample');
}

/**
 * How far apart identical processes were: per round, the slowest one's rate over the fastest
 * one's, and the median of that over the rounds. A quiet machine and a steady baseline read
 * close to 1.00x.
 */
function poolSpread(name: string, members: readonly (readonly Sample[])[]): string {
  const spreads = Array.from({ length: ROUNDS }, (_, round) => {
    const rates = members.map((runs) => required(runs[round], 'a pooled sample').rate);
    return Math.min(...rates) / Math.max(...rates);
  });
  return `  identical ${name} processes, slowest/fastest: ${median(spreads).toFixed(2)}x (per round: ${spreads.map((x) => x.toFixed(2)).join(' ')})`;
}

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`missing ${what}`);
  return value;
}

/** A side's medians over its runs of one load. */
function sampleLine(load: Load, name: string, runs: readonly Sample[]): string {
  return (
    `  ${name.padEnd(9)} ${fmt(median(runs.map((s) => s.rate))).padStart(8)} ${load.unit.padEnd(6)}` +
    `  p50 ${ms(median(runs.map((s) => s.p50)))}  p99 ${ms(median(runs.map((s) => s.p99)))}` +
    `  CPU ${fmt(median(runs.map((s) => s.cpuPerRequest))).padStart(6)} µs/req` +
    ` (kernel ${fmt(median(runs.map((s) => s.systemPerRequest)))},` +
    ` GC ${fmt(median(runs.map((s) => s.gcPerRequest)))},` +
    ` clients ${fmt(median(runs.map((s) => s.clientsPerRequest)))})` +
    `  (${String(runs.reduce((sum, s) => sum + s.answered, 0))} answers)`
  );
}

function fmt(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(1)}k` : value.toFixed(value >= 100 ? 0 : 1);
}

function ms(value: number): string {
  return `${value.toFixed(1).padStart(6)} ms`;
}

/**
 * Each server's CPU while nobody calls it (the product polls its venues, keeps their streams and
 * checks the chain): spread over a load, this is part of the CPU per request the loads report.
 */
async function idleCpu(targets: readonly Target[]): Promise<string> {
  const seconds = 5;
  const before = await Promise.all(targets.map((target) => target.usage()));
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const after = await Promise.all(targets.map((target) => target.usage()));
  const shares = targets.map((target, i) => {
    const used =
      required(after[i], target.name).cpuMicros - required(before[i], target.name).cpuMicros;
    return `${target.name} ${(used / seconds / 1000).toFixed(1)}`;
  });
  return `idle CPU over ${String(seconds)} s, ms per second: ${shares.join(', ')}`;
}

/** RSS as the servers idle after the loads, left to V8's own memory reducer (no forced GC). */
async function watchSettling(targets: readonly Target[]): Promise<void> {
  for (let waited = 5; waited <= SETTLE_SECONDS; waited += 5) {
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const usage = await Promise.all(targets.map((target) => target.usage()));
    const rss = targets.map(
      (target, i) => `${target.name} ${mb(required(usage[i], target.name).rss)}`,
    );
    console.log(`  ${String(waited).padStart(3)} s later: ${rss.join(', ')}`);
  }
}

/** A figure of this run the design must keep on one side of `floor`. */
interface Floor {
  readonly what: string;
  /** Undefined when its section did not run (BENCH_ONLY). */
  readonly figure: number | undefined;
  readonly bound: 'at least' | 'at most';
  readonly floor: number;
  readonly unit: 'x' | 'ms' | 'µs' | 'MB' | 'calls';
}

/** Each floor's figure, the floor and whether this run kept it. */
function floorLines(floors: readonly Floor[]): string[] {
  const shown = (value: number, unit: Floor['unit']): string =>
    unit === 'x'
      ? `${value.toFixed(2)}x`
      : unit === 'ms'
        ? `${value >= 0 ? '+' : ''}${value.toFixed(1)} ms`
        : `${value.toFixed(0)} ${unit}`;
  const lines = floors.map(({ what, figure, bound, floor, unit }) => {
    const kept =
      figure === undefined
        ? 'not run'
        : (bound === 'at least' ? figure >= floor : figure <= floor)
          ? 'ok'
          : 'MISSED';
    const value = figure === undefined ? '-' : shown(figure, unit);
    const limit = `${bound === 'at least' ? '>=' : '<='} ${shown(floor, unit)}`;
    return `  ${what.padEnd(40)} ${value.padStart(9)}   floor ${limit.padEnd(10)}  ${kept}`;
  });
  return ['floors, as figures of this run:', ...lines];
}

function mb(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(0)} MB`;
}

// ---------------------------------------------------------------------------------------------
// setup

async function record(url: string, init?: RequestInit): Promise<RecordedResponse> {
  const response = await fetch(url, init);
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (!PER_RESPONSE_HEADERS.has(name)) headers[name] = value;
  });
  return { status: response.status, headers, body: await response.text() };
}

async function main(): Promise<void> {
  const loadBefore = uptime();
  // 10 buyers settle concurrently from one key
  const chain = await startLocalChain({
    intervalMiningSeconds: STRANDED_TRANSACTION_SWEEP_SECONDS,
  });
  const markets = await FakeMarkets.start();
  const targets: Target[] = [];
  // each product process keeps its batch-settlement channels in a directory of its own
  const channelDirs: string[] = [];
  const channelDir = (): string => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'x402-bench-channels-'));
    channelDirs.push(dir);
    return dir;
  };
  const started = async (name: string, settings: TargetSettings): Promise<Target> => {
    const target = await Target.start(name, settings);
    targets.push(target);
    return target;
  };
  try {
    const productSettings = (settlerKey = 0): TargetSettings => ({
      kind: 'product',
      env: {
        ...markets.env(),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        X402_FACILITATOR: 'embedded',
        X402_NETWORK: 'base-sepolia',
        X402_SCHEMES: 'exact,batch-settlement',
        X402_PAY_TO: PAY_TO,
        X402_SETTLER_PRIVATE_KEY: required(chain.accounts[settlerKey], 'settler key'),
        X402_RPC_URL: chain.rpcUrl,
        ...passThrough('X402_RECEIPT_POLL_MS'),
        // one client address sends every load: the rate limits would answer 429 (the reference sides have none)
        RATE_LIMIT_FREE: '0',
        RATE_LIMIT_UNPAID: '0',
        // batch settlement: claims every second, so the end-of-run check sees every voucher claimed
        X402_BATCH_SETTLE_INTERVAL_MS: '1000',
        X402_BATCH_DATA_DIR: channelDir(),
      },
    });
    const product = await started('product', productSettings());
    await waitForPrices(product.url);
    const buyers = await Promise.all(
      Array.from({ length: CONNECTIONS }, () => fundedBuyer(chain, 1000n * USDC)),
    );
    const free = await record(`${product.url}${FREE_PATH}`);
    const unpaid = await record(`${product.url}${PAID_PATH}`);
    const paid = await paidRecord(required(buyers[0], 'buyer'), `${product.url}${PAID_PATH}`);
    await requestAfterSale(product.url);
    // Two more sold products for the free route and the 402, each with a key of its own: "products"
    // is, each round, the one of the three with the median rate, as "bare" is of the bare ones.
    // Stopped after those loads (their RSS is printed as the loads left them); the paid loads
    // and the RSS watch afterwards are the first product's.
    const soldTwins: Target[] = [];
    if (chosen(1) || chosen(2)) {
      for (const [i, key] of [3, 4].entries()) {
        const twin = await started(`product${String(i + 2)}`, productSettings(key));
        await waitForPrices(twin.url);
        await paidRecord(required(buyers[i + 1], 'buyer'), `${twin.url}${PAID_PATH}`);
        await requestAfterSale(twin.url);
        soldTwins.push(twin);
      }
    }
    const pooledProducts = { name: 'products', of: [product, ...soldTwins] };
    const requirement = offeredRequirement(unpaid);
    const bare = { kind: 'bare', routes: { [FREE_PATH]: free, [PAID_PATH]: unpaid } } as const;
    // three identical bare servers; "bare" is the one with the median rate in each round
    const bares = [
      await started('bare1', bare),
      await started('bare2', bare),
      await started('bare3', bare),
    ];
    const pooledBare = { name: 'bare', of: bares };
    // three identical NestJS reference apps; "nest" is the one with the median rate in each round
    const nests = [
      await started('nest1', { ...bare, kind: 'nest' }),
      await started('nest2', { ...bare, kind: 'nest' }),
      await started('nest3', { ...bare, kind: 'nest' }),
    ];
    const pooledNest = { name: 'nest', of: nests };
    // The same product, never paid: what the first settled payment costs the process, on the free
    // route and the 402. Started only for those; it stays up (idle, polling its venues) through the
    // paid loads.
    const unsold = chosen(1) || chosen(2) ? [await started('unsold', productSettings())] : [];
    for (const side of unsold) await waitForPrices(side.url);
    const reference = await started('express', {
      kind: 'express',
      rpcUrl: chain.rpcUrl,
      chainId: chain.chainId,
      settlerKey: required(chain.accounts[2], 'reference settler key'),
      requirement,
      path: PAID_PATH,
      paidBody: { ...paid, headers: { 'content-type': 'application/json; charset=utf-8' } },
    });
    const idle = new Map(
      await Promise.all(targets.map(async (target) => [target, await target.usage()] as const)),
    );
    console.log(await idleCpu(targets));
    const price = BigInt(requirement.amount);

    let section = 0;
    const compareIfChosen = async (comparison: Comparison): Promise<void> => {
      section += 1;
      if (!chosen(section)) return;
      console.log((await compare(comparison)).join('\n'));
    };
    const freeLabel = `free GET ${FREE_PATH}, ${String(CONNECTIONS)} connections`;
    await compareIfChosen({
      load: httpLoad(freeLabel, FREE_PATH, 200),
      sides: [...interleaved(pooledProducts.of, bares, nests), ...unsold],
      pools: [pooledBare, pooledNest, pooledProducts],
      ratios: [
        ['products', 'nest'],
        ['product', 'nest'],
        ['products', 'bare'],
        ['product', 'bare'],
        ['nest', 'bare'],
        ['unsold', 'bare'],
        ['product', 'unsold'],
      ],
    });
    const unpaidLabel = `unpaid GET ${PAID_PATH} -> 402, ${String(CONNECTIONS)} connections`;
    await compareIfChosen({
      load: httpLoad(unpaidLabel, PAID_PATH, 402),
      sides: [...interleaved(pooledProducts.of, bares), reference, ...unsold],
      pools: [pooledBare, pooledProducts],
      ratios: [
        ['products', 'bare'],
        ['products', 'express'],
        ['product', 'bare'],
        ['unsold', 'bare'],
      ],
    });
    // their RSS as the loads left them, then they stop: only the first product takes the paid loads
    const twinsAfter = await Promise.all(soldTwins.map((twin) => twin.usage()));
    for (const twin of soldTwins) {
      await twin.stop();
      targets.splice(targets.indexOf(twin), 1);
    }
    const exact1 = `paid GET ${PAID_PATH}, 1 @x402/fetch client`;
    await compareIfChosen({
      load: paidLoad(exact1, buyers.slice(0, 1), chain, price),
      sides: [product, reference],
      ratios: [['product', 'express']],
    });
    const exact10 = `paid GET ${PAID_PATH}, ${String(CONNECTIONS)} @x402/fetch clients`;
    await compareIfChosen({
      load: paidLoad(exact10, buyers, chain, price),
      sides: [product, reference],
      ratios: [['product', 'express']],
    });
    const batchBuyers = await Promise.all(
      Array.from({ length: CONNECTIONS }, () => batchBuyer(chain)),
    );
    // the deposits (one chain round trip each) happen here, outside the measured loads
    for (const buyer of batchBuyers) await paidRecord(buyer, `${product.url}${PAID_PATH}`);
    batchPaid.set('product', batchBuyers.length);
    section += 1;
    if (chosen(section)) {
      const unpaid1 = unpaidLoop(`unpaid GET ${PAID_PATH} -> 402, 1 fetch client`, PAID_PATH);
      const batch1 = paidLoad(
        `batch-settlement paid GET ${PAID_PATH}, 1 @x402/fetch client`,
        batchBuyers.slice(0, 1),
        chain,
        price,
        'batch',
      );
      const { lines, p50Difference: delta } = await compareLoads([unpaid1, batch1], product);
      console.log(lines.join('\n'));
      console.log(
        `batch p50 - unpaid 402 p50 (1 client each, paired rounds): ${delta >= 0 ? '+' : ''}${delta.toFixed(1)} ms`,
      );
    }
    const batch10 = `batch-settlement paid GET ${PAID_PATH}, ${String(CONNECTIONS)} @x402/fetch clients`;
    await compareIfChosen({
      load: paidLoad(batch10, batchBuyers, chain, price, 'batch'),
      sides: [product],
      ratios: [],
    });
    section += 1;
    const ready: ReadyFigures[] = [];
    if (chosen(section)) {
      const challenge = required(unpaid.headers['payment-required'], 'the 402 challenge');
      const context = {
        url: product.url,
        path: PAID_PATH,
        chain,
        rounds: ROUNDS,
        seconds: PAID_SECONDS,
        cpuMicros: async () => (await product.usage()).cpuMicros,
        checkExact: (payments: readonly Payment[]) =>
          checkOnChain('product', chain, payments, price),
        countBatch: (paid: number) => {
          batchPaid.set('product', (batchPaid.get('product') ?? 0) + paid);
        },
      };
      for (const connections of [1, CONNECTIONS]) {
        const { lines, figures } = await readySection(context, connections, challenge);
        console.log(lines.join('\n'));
        ready.push(figures);
      }
    }
    section += 1;
    if (chosen(section)) {
      // every one of the 25 symbols priced and with statistics, or no 402 (404 / 503)
      await waitForPrices(product.url, MARKETS_PATH);
      const markets = await record(`${product.url}${MARKETS_PATH}`);
      const context = {
        url: product.url,
        chain,
        rounds: ROUNDS,
        seconds: PAID_SECONDS,
        cpuMicros: async () => (await product.usage()).cpuMicros,
        checkExact: (payments: readonly Payment[], at: bigint) =>
          checkOnChain('product', chain, payments, at),
        countBatch: (paid: number, at: bigint) => {
          batchSoldElsewhere += BigInt(paid) * at;
        },
      };
      const challenges = {
        ticker: required(unpaid.headers['payment-required'], 'the ticker 402 challenge'),
        markets: required(markets.headers['payment-required'], 'the markets 402 challenge'),
      };
      console.log((await marketsSection(context, challenges)).join('\n'));
    }
    section += 1;
    if (chosen(section)) {
      // its own product, venues and buyers; paid to another address, so that this run's
      // claimed-total check for X402_PAY_TO counts only the loads above
      const { env } = productSettings(5) as Extract<TargetSettings, { kind: 'product' }>;
      const lines = await streamsSection({
        chain,
        // not among `targets`: the section stops it, before the RSS lines of the others
        startProduct: (productEnv) => Target.start('streams', { kind: 'product', env: productEnv }),
        productEnv: { ...env, X402_PAY_TO: STREAMS_PAY_TO },
      });
      console.log(lines.join('\n'));
    }
    section += 1;
    let official: OfficialClientFigures | undefined;
    if (chosen(section)) {
      const { lines, figures } = await officialClientSection({
        url: product.url,
        path: PAID_PATH,
        chain,
        rounds: ROUNDS,
        calls: OFFICIAL_CALLS,
        seconds: OFFICIAL_SECONDS,
        loads: OFFICIAL_LOADS,
        usage: () => product.usage(),
        checkExact: (payments) => checkOnChain('product', chain, payments, price),
        countBatch: (paid) => {
          batchPaid.set('product', (batchPaid.get('product') ?? 0) + paid);
        },
      });
      console.log(lines.join('\n'));
      official = figures;
    }
    const get = (label: string) => medians.get(`${label}|product`);
    const [batchTen, exactTen] = [get(batch10), get(exact10)];
    if (batchTen !== undefined && exactTen !== undefined) {
      console.log(
        `batch/exact paid/s, ${String(CONNECTIONS)} clients: ${(batchTen.rate / exactTen.rate).toFixed(1)}x`,
      );
    }
    console.log(
      await checkBatchClaims(chain, batchPaid.get('product') ?? 0, price, batchSoldElsewhere),
    );
    const after = await Promise.all(targets.map((target) => target.usage()));
    console.log('RSS, idle -> after the loads (JS heap used / V8 heap reserved, external)');
    const memoryLine = (target: Target, now: Usage, when = ''): string => {
      const before = required(idle.get(target), target.name);
      return `  ${target.name.padEnd(9)} ${mb(before.rss)} -> ${mb(now.rss)} (${mb(now.heapUsed)} / ${mb(now.heapTotal)}, ${mb(now.external)})${when}`;
    };
    targets.forEach((target, i) => {
      console.log(memoryLine(target, required(after[i], target.name)));
    });
    soldTwins.forEach((twin, i) => {
      console.log(memoryLine(twin, required(twinsAfter[i], twin.name), ' (after its loads)'));
    });
    await watchSettling(targets);
    const ratio = (label: string, pair: string) => ratioMedians.get(`${label}|${pair}`);
    console.log(
      floorLines([
        {
          what: 'free GET /v1/assets, products/nest',
          figure: ratio(freeLabel, 'products/nest')?.rate,
          bound: 'at least',
          floor: 0.7,
          unit: 'x',
        },
        {
          what: 'unpaid 402, products/express',
          figure: ratio(unpaidLabel, 'products/express')?.rate,
          bound: 'at least',
          floor: 2,
          unit: 'x',
        },
        {
          what: 'paid, 1 client, p50 product - express',
          figure: ratio(exact1, 'product/express')?.p50,
          bound: 'at most',
          floor: 2,
          unit: 'ms',
        },
        {
          what: `paid, ${String(CONNECTIONS)} clients, paid/s product/express`,
          figure: ratio(exact10, 'product/express')?.rate,
          bound: 'at least',
          floor: 1,
          unit: 'x',
        },
        ...ready.flatMap((figures): Floor[] => [
          {
            what: `batch, ${String(figures.connections)} conn., server CPU per paid call`,
            figure: figures.byKind.get('batch')?.cpu,
            bound: 'at most',
            floor: 500,
            unit: 'µs',
          },
          {
            what: `batch, ${String(figures.connections)} conn., paid/core batch/exact`,
            figure: figures.batchPerCoreOverExact,
            bound: 'at least',
            floor: 10,
            unit: 'x',
          },
          {
            what: `batch, ${String(figures.connections)} conn., p50 over the unpaid 402`,
            figure: figures.batchOverUnpaid,
            bound: 'at most',
            floor: 2,
            unit: 'ms',
          },
        ]),
        ...[1, CONNECTIONS].map((clients): Floor => ({
          what: `official client, ${String(clients)} cl., server CPU per call`,
          figure: official?.cpu.get(`batch${String(clients)}`),
          bound: 'at most',
          floor: 1000,
          unit: 'µs',
        })),
        {
          what: 'official client, paid/core batch/exact',
          figure: official?.batchPerCoreOverExact.get(1),
          bound: 'at least',
          floor: 5,
          unit: 'x',
        },
        {
          what: 'official client, calls not answered 200',
          figure: official?.failures,
          bound: 'at most',
          floor: 0,
          unit: 'calls',
        },
        {
          what: 'product RSS after the loads',
          figure: (after[targets.indexOf(product)]?.rss ?? Number.NaN) / 2 ** 20,
          bound: 'at most',
          floor: 250,
          unit: 'MB',
        },
      ]).join('\n'),
    );
    console.log(
      `product ran as: node ${process.version}, no flags, createApp from dist/src (tsc's output)`,
    );
    if (AFTER_SALE !== 'none')
      console.log(`BENCH_AFTER_SALE=${AFTER_SALE}: one such request after the sale`);
    console.log(
      `${String(ROUNDS)} rounds, ${String(SECONDS)} s per HTTP load, ${String(PAID_SECONDS)} s per paid load; ` +
        `every paid 200 checked on chain. Machine load: before ${loadBefore}; after ${uptime()}`,
    );
  } finally {
    await Promise.all(targets.map((target) => target.stop()));
    await markets.close();
    await chain.stop();
    for (const dir of channelDirs) rmSync(dir, { recursive: true, force: true });
  }
}

function profileArgs(name: string): string[] {
  const dir = process.env['BENCH_CPU_PROF'];
  // one profile per kind of server: the first of identical processes stands for all
  return dir === undefined || /^(bare|nest)[2-9]$/.test(name) || /^product\d/.test(name)
    ? []
    : ['--cpu-prof', `--cpu-prof-dir=${dir}/${name}`];
}

function passThrough(name: string): Record<string, string> {
  const value = process.env[name];
  return value === undefined ? {} : { [name]: value };
}

async function paidRecord(buyer: Buyer, url: string): Promise<RecordedResponse> {
  const response = await buyer.fetchV2(url);
  const body = await response.text();
  if (response.status !== 200) throw new Error(`paid request answered ${String(response.status)}`);
  return { status: 200, headers: {}, body };
}

function offeredRequirement(challenge: RecordedResponse): PaymentRequirements {
  const header = challenge.headers['payment-required'];
  if (challenge.status !== 402 || header === undefined) throw new Error('no 402 challenge');
  // the reference sells `exact` only
  const requirement = decodePaymentRequiredHeader(header).accepts.find(
    (accept) => accept.scheme === 'exact',
  );
  if (requirement === undefined) throw new Error('the 402 offers nothing');
  return requirement;
}

async function requestAfterSale(url: string): Promise<void> {
  const path = AFTER_SALE_PATHS[AFTER_SALE];
  if (path !== undefined) await (await fetch(`${url}${path}`)).text();
}

async function waitForPrices(url: string, pricedPath = PAID_PATH): Promise<void> {
  const until = Date.now() + 20_000;
  while ((await fetch(`${url}${pricedPath}`)).status !== 402) {
    if (Date.now() > until) throw new Error(`the product cannot sell ${pricedPath} after 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function uptime(): string {
  return execSync('uptime')
    .toString()
    .trim()
    .replace(/^.*load/, 'load');
}

await main();
