/**
 * What a buyer who actually comes costs the service: unmodified official clients (`@x402/fetch`'s
 * `wrapFetchWithPayment` with the scheme `npm run client` pays with, scripts/client.ts), each a
 * fresh buyer calling the route one call after another at its own pace — its 402 probe, its
 * deposits, its signing on the same cores. Three loads alternate round by round, the order
 * rotating: `batch-settlement` with 1 client and with 10 clients, and `exact` with 1 client. Per
 * load: the 200s per second, the p50 and p99 a client saw (whole calls, probe and deposit
 * included), the server's CPU per 200 (its process's CPU time over the run, claim rounds and
 * venue polling included), the deposits the clients made, the 402s they saw per 200, and every
 * call that did not answer 200, with its reason. Per round, batch/exact paid calls per core.
 */
import { decodePaymentResponseHeader } from '@x402/core/http';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { payingScheme } from '../scripts/client.js';
import type { LocalChain } from '../test/support/chain.js';
import { USDC } from '../test/support/paying-clients.js';
import { fmt, median, percentile } from './ready-section.js';

type Scheme = 'batch' | 'exact';
interface Kind {
  /** Its name in `loads`. */
  readonly id: string;
  readonly label: string;
  readonly scheme: Scheme;
  readonly clients: number;
}
const KINDS: readonly Kind[] = [
  { id: 'batch1', label: 'batch, 1 client', scheme: 'batch', clients: 1 },
  { id: 'batch10', label: 'batch, 10 clients', scheme: 'batch', clients: 10 },
  { id: 'exact1', label: 'exact, 1 client', scheme: 'exact', clients: 1 },
];
/** The loads `loads` may name. */
export const OFFICIAL_LOAD_IDS: readonly string[] = KINDS.map((kind) => kind.id);
/** Each buyer's USDC: far more than 500 calls and any deposit the client sizes for them. */
const FUNDS = 50n * USDC;
/** A run whose clients failed this many calls stops: the failures are the finding. */
const FAILURES_STOP = 20;

/** What the section needs of the bench: the product, its clocks and the on-chain checks. */
export interface OfficialClientContext {
  readonly url: string;
  readonly path: string;
  readonly chain: LocalChain;
  readonly rounds: number;
  /** Calls each client makes per run. */
  readonly calls: number;
  /** A run stops after this long, whatever its clients have done. */
  readonly seconds: number;
  /** The loads to run, of `batch1`, `batch10` and `exact1` (a profile of one load alone). */
  readonly loads: readonly string[];
  /** The product's CPU time and GC pauses so far, in µs. */
  usage(): Promise<{ cpuMicros: number; gcMicros: number }>;
  /** Every `exact` 200 moved exactly the price from its payer to the seller. */
  checkExact(payments: readonly { payer: Hex; transaction: Hex }[]): Promise<void>;
  /** Batch 200s, claimed at the end of the run. */
  countBatch(paid: number): void;
}

interface Run {
  readonly paid: number;
  readonly rate: number;
  readonly p50: number;
  readonly p99: number;
  /** The server's CPU and GC pauses per 200, µs. */
  readonly cpu: number;
  readonly gc: number;
  readonly deposits: number;
  readonly probes: number;
  readonly failures: readonly string[];
  readonly timedOut: boolean;
}

/** Figures of the section, medians over the rounds. */
export interface OfficialClientFigures {
  /** Median server CPU per 200, µs, by load id (`batch1`, ...). */
  readonly cpu: ReadonlyMap<string, number>;
  /** Median per-round ratio of batch to exact paid calls per core, by batch client count. */
  readonly batchPerCoreOverExact: ReadonlyMap<number, number>;
  /** Calls that did not answer 200, over every run (the uncounted first ones too). */
  readonly failures: number;
}

/** One client's calls: latencies of its 200s, what it paid with, what failed. */
interface ClientRecord {
  readonly latencies: number[];
  /** `exact` 200s, read back from the chain after the run. */
  readonly payments: { payer: Hex; transaction: Hex }[];
  readonly failures: string[];
  deposits: number;
  probes: number;
  /** The call in flight signed a deposit. */
  depositing: boolean;
}

/** Runs the section; its lines and figures. */
export async function officialClientSection(
  context: OfficialClientContext,
): Promise<{ lines: string[]; figures: OfficialClientFigures }> {
  const failures: string[] = [];
  const runOnce = async (kind: Kind): Promise<Run> => {
    const run = await runKind(context, kind);
    failures.push(...run.failures.map((reason) => `${kind.label}, ${reason}`));
    return run;
  };
  const kinds = KINDS.filter((kind) => context.loads.includes(kind.id));
  for (const kind of kinds) await runOnce(kind); // a first run each, not counted
  const runs = new Map<Kind, Run[]>(kinds.map((kind) => [kind, []]));
  for (let round = 0; round < context.rounds; round += 1) {
    const turn = round % kinds.length;
    const order = [...kinds.slice(turn), ...kinds.slice(0, turn)];
    for (const kind of order) runs.get(kind)?.push(await runOnce(kind));
  }
  return report(context, runs, failures);
}

async function runKind(context: OfficialClientContext, kind: Kind): Promise<Run> {
  const channelsDir = mkdtempSync(path.join(os.tmpdir(), 'x402-bench-buyer-channels-'));
  try {
    const records: ClientRecord[] = [];
    const buyers: (() => Promise<void>)[] = [];
    for (let i = 0; i < kind.clients; i += 1) {
      const key = generatePrivateKey();
      await context.chain.mintUsdc(privateKeyToAccount(key).address, FUNDS);
      const record: ClientRecord = {
        latencies: [],
        payments: [],
        failures: [],
        deposits: 0,
        probes: 0,
        depositing: false,
      };
      records.push(record);
      buyers.push(() => buyerLoop(context, kind, key, channelsDir, record, records));
    }
    const before = await context.usage();
    const started = performance.now();
    await Promise.all(buyers.map((buyer) => buyer()));
    const elapsed = (performance.now() - started) / 1000;
    const after = await context.usage();
    const latencies = records.flatMap((record) => record.latencies).sort((a, b) => a - b);
    const paid = latencies.length;
    if (kind.scheme === 'exact') await context.checkExact(records.flatMap((r) => r.payments));
    else context.countBatch(paid);
    return {
      paid,
      rate: paid / elapsed,
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
      cpu: (after.cpuMicros - before.cpuMicros) / Math.max(1, paid),
      gc: (after.gcMicros - before.gcMicros) / Math.max(1, paid),
      deposits: sum(records.map((record) => record.deposits)),
      probes: sum(records.map((record) => record.probes)),
      failures: records.flatMap((record) => record.failures),
      timedOut: elapsed >= context.seconds,
    };
  } finally {
    rmSync(channelsDir, { recursive: true, force: true });
  }
}

/**
 * One fresh buyer, as `npm run client` builds it, calling the route `context.calls` times in a
 * row; the hook and the fetch under the client only count (deposits signed, 402s answered).
 */
async function buyerLoop(
  context: OfficialClientContext,
  kind: Kind,
  key: Hex,
  channelsDir: string,
  record: ClientRecord,
  all: readonly ClientRecord[],
): Promise<void> {
  const client = new x402Client().register(
    'eip155:*',
    payingScheme(
      key,
      // the client prints nothing here: only the scheme is taken, with its channels' directory
      {
        out: () => undefined,
        err: () => undefined,
        channelsDir: path.join(channelsDir, key.slice(2, 10)),
      },
      kind.scheme === 'batch',
    ),
  );
  client.onAfterPaymentCreation(({ paymentPayload }) => {
    if ((paymentPayload.payload as { type?: unknown }).type === 'deposit') {
      record.depositing = true;
      record.deposits += 1;
    }
    return Promise.resolve();
  });
  const counting: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (response.status === 402) record.probes += 1;
    return response;
  };
  const pay = wrapFetchWithPayment(counting, client);
  const url = `${context.url}${context.path}`;
  const payer = privateKeyToAccount(key).address;
  const until = performance.now() + context.seconds * 1000;
  for (let call = 1; call <= context.calls && performance.now() < until; call += 1) {
    if (sum(all.map((each) => each.failures.length)) >= FAILURES_STOP) return;
    record.depositing = false;
    const failed = (what: string): void => {
      const deposit = record.depositing ? ' (with a deposit)' : '';
      record.failures.push(`call ${String(call)}${deposit}: ${what.replace(/\s+/g, ' ')}`);
    };
    const sent = performance.now();
    try {
      const response = await pay(url);
      const body = await response.text();
      const receipt = response.headers.get('payment-response');
      if (response.status !== 200 || receipt === null) {
        failed(
          `${String(response.status)}${receipt === null ? ', no receipt' : ''}: ${reason(body)}`,
        );
        continue;
      }
      record.latencies.push(performance.now() - sent);
      if (kind.scheme === 'exact') {
        const settlement = decodePaymentResponseHeader(receipt);
        record.payments.push({ payer, transaction: settlement.transaction as Hex });
      }
    } catch (error) {
      failed(error instanceof Error ? error.message : String(error));
    }
  }
}

/** A refusal's `error` field (x402 and problem bodies carry one), else the body's start. */
function reason(body: string): string {
  try {
    const { error, detail } = JSON.parse(body) as { error?: unknown; detail?: unknown };
    if (typeof error === 'string') return error;
    if (typeof detail === 'string') return detail;
  } catch {
    // not JSON: its start says what it is
  }
  return body.slice(0, 200);
}

function report(
  context: OfficialClientContext,
  runs: ReadonlyMap<Kind, readonly Run[]>,
  failures: readonly string[],
): { lines: string[]; figures: OfficialClientFigures } {
  const of = (kind: Kind): readonly Run[] => runs.get(kind) ?? [];
  const kinds = [...runs.keys()];
  const exact = kinds.find((kind) => kind.scheme === 'exact');
  const lines = [
    `official client (@x402/fetch, scripts/client.ts's schemes), GET ${context.path}, ` +
      `${String(context.calls)} calls per client in a row, a fresh buyer each run`,
  ];
  const cpu = new Map<string, number>();
  for (const kind of kinds) {
    const kindRuns = of(kind);
    const at = (f: (run: Run) => number): number => median(kindRuns.map(f));
    const perCall = at((run) => run.cpu);
    cpu.set(kind.id, perCall);
    const paid = sum(kindRuns.map((run) => run.paid));
    const failed = sum(kindRuns.map((run) => run.failures.length));
    const timedOut = kindRuns.some((run) => run.timedOut)
      ? ', a run stopped at its time limit'
      : '';
    lines.push(
      `  ${kind.label.padEnd(18)} ${fmt(at((run) => run.rate)).padStart(6)} calls/s  p50 ${at((run) => run.p50).toFixed(2)} ms` +
        `  p99 ${at((run) => run.p99).toFixed(2)} ms  server CPU ${fmt(perCall)} µs/call (GC ${fmt(at((run) => run.gc))})` +
        `  ${fmt(1e6 / perCall)} paid/s per core  deposits ${String(sum(kindRuns.map((run) => run.deposits)))}` +
        `  402s per 200 ${(sum(kindRuns.map((run) => run.probes)) / Math.max(1, paid)).toFixed(2)}` +
        `  failed ${String(failed)} of ${String(paid + failed)}${timedOut}`,
    );
  }
  const batchPerCoreOverExact = new Map<number, number>();
  const exactRuns = exact === undefined ? [] : of(exact);
  for (const kind of exactRuns.length === 0 ? [] : kinds.filter((k) => k.scheme === 'batch')) {
    const ratio = median(
      of(kind).flatMap((run, i) => {
        const baseline = exactRuns[i];
        return baseline === undefined ? [] : [baseline.cpu / run.cpu];
      }),
    );
    batchPerCoreOverExact.set(kind.clients, ratio);
  }
  if (batchPerCoreOverExact.size > 0) {
    lines.push(
      `  batch/exact paid calls per core (per round, median; exact at 1 client): ` +
        [...batchPerCoreOverExact]
          .map(
            ([clients, ratio]) =>
              `${String(clients)} ${clients === 1 ? 'client' : 'clients'} ${ratio.toFixed(1)}x`,
          )
          .join(', '),
    );
  }
  if (failures.length > 0) {
    lines.push(
      `  calls that did not answer 200 (${String(failures.length)}, first runs included):`,
    );
    for (const reason of failures.slice(0, 10)) lines.push(`    ${reason}`);
  }
  return { lines, figures: { cpu, batchPerCoreOverExact, failures: failures.length } };
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
