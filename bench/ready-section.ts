/**
 * The server's cost of a paid call, with the buyers' work off the clock (ready-headers.ts): at 1
 * and at 10 connections, three loads alternate on the product, round by round with the order
 * rotating, each on its own fresh connections: the unpaid 402, `batch-settlement` vouchers (one
 * channel per connection) and `exact` payments (one buyer per connection). Per load: rate, p50
 * and p99, the server's CPU per call (for `exact` including the embedded facilitator's
 * settlement), paid calls per second per core of the server (1 s of CPU over the CPU per call),
 * and per round the p50 over the unpaid 402's and the batch/exact ratio of calls per core.
 */
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { LocalChain } from '../test/support/chain.js';
import { USDC } from '../test/support/paying-clients.js';
import { VoucherChannel, exactHeaders, readyLoad, type ReadyLoadResult } from './ready-headers.js';

type Kind = 'unpaid 402' | 'batch' | 'exact';
const KINDS: readonly Kind[] = ['unpaid 402', 'batch', 'exact'];

/** What the section needs of the bench: the product, its CPU clock and the on-chain checks. */
export interface ReadySectionContext {
  readonly url: string;
  readonly path: string;
  readonly chain: LocalChain;
  readonly rounds: number;
  readonly seconds: number;
  /** The product's CPU time so far, in µs. */
  cpuMicros(): Promise<number>;
  /** Every `exact` 200 moved exactly the price from its payer to the seller. */
  checkExact(payments: readonly { payer: Hex; transaction: Hex }[]): Promise<void>;
  /** Batch 200s, claimed at the end of the run. */
  countBatch(paid: number): void;
}

interface Run {
  readonly rate: number;
  readonly p50: number;
  readonly p99: number;
  /** The server's CPU per answer, µs. */
  readonly cpu: number;
}

/** Figures of one connection count, medians over the rounds. */
export interface ReadyFigures {
  readonly connections: number;
  readonly byKind: ReadonlyMap<Kind, Run>;
  /** Median per-round p50 differences over the unpaid 402, ms. */
  readonly batchOverUnpaid: number;
  readonly exactOverUnpaid: number;
  /** Median per-round ratio of batch to exact paid calls per core. */
  readonly batchPerCoreOverExact: number;
}

/** Runs the section at `connections`; its lines and figures. */
export async function readySection(
  context: ReadySectionContext,
  connections: number,
  challenge: string,
): Promise<{ lines: string[]; figures: ReadyFigures }> {
  const channels: VoucherChannel[] = [];
  for (let i = 0; i < connections; i += 1) {
    channels.push(await VoucherChannel.open(context.chain, `${context.url}${context.path}`));
  }
  context.countBatch(connections); // the deposits' own paid calls
  const buyers: Hex[] = [];
  for (let i = 0; i < connections; i += 1) {
    const key = generatePrivateKey();
    await context.chain.mintUsdc(privateKeyToAccount(key).address, 100n * USDC);
    buyers.push(key);
  }
  // guesses for the first run; then 1.5x what the last run of the kind needed, per connection
  const perConnection = new Map<Kind, number>([
    ['batch', Math.ceil(4000 / connections) * context.seconds],
    ['exact', Math.ceil(300 / connections) * context.seconds],
  ]);
  const runOnce = async (kind: Kind): Promise<Run> => {
    const need = perConnection.get(kind) ?? 0;
    let sources: (() => string | null | undefined)[];
    if (kind === 'unpaid 402') {
      sources = channels.map(() => () => null);
    } else if (kind === 'batch') {
      for (const channel of channels) channel.prepare(need);
      sources = channels.map((channel) => () => channel.next());
    } else {
      const ready = await Promise.all(buyers.map((key) => exactHeaders(key, challenge, need)));
      sources = ready.map((headers) => () => headers.shift());
    }
    const before = await context.cpuMicros();
    const result = await readyLoad(
      context.url,
      context.path,
      sources,
      kind === 'unpaid 402' ? 402 : 200,
      context.seconds,
    );
    const after = await context.cpuMicros();
    // ran out: every loop stopped at once, so the rate over the shorter time still holds
    if (kind === 'batch') context.countBatch(result.latencies.length);
    if (kind === 'exact') await context.checkExact(exactPayments(result, buyers));
    if (kind !== 'unpaid 402') {
      const rate = result.latencies.length / result.elapsedSeconds / connections;
      perConnection.set(kind, Math.ceil(rate * context.seconds * 1.5) + 20);
    }
    return summary(result, after - before);
  };
  for (const kind of KINDS) await runOnce(kind); // a first run each, not counted
  const runs = new Map<Kind, Run[]>(KINDS.map((kind) => [kind, []]));
  for (let round = 0; round < context.rounds; round += 1) {
    const order = [...KINDS.slice(round % 3), ...KINDS.slice(0, round % 3)];
    for (const kind of order) runs.get(kind)?.push(await runOnce(kind));
  }
  return report(connections, runs);
}

function report(
  connections: number,
  runs: ReadonlyMap<Kind, readonly Run[]>,
): { lines: string[]; figures: ReadyFigures } {
  const of = (kind: Kind): readonly Run[] => runs.get(kind) ?? [];
  const perRound = (f: (unpaid: Run, batch: Run, exact: Run) => number): number =>
    median(
      of('unpaid 402').flatMap((unpaid, i) => {
        const batch = of('batch')[i];
        const exact = of('exact')[i];
        return batch === undefined || exact === undefined ? [] : [f(unpaid, batch, exact)];
      }),
    );
  const byKind = new Map<Kind, Run>(
    KINDS.map((kind) => [
      kind,
      {
        rate: median(of(kind).map((run) => run.rate)),
        p50: median(of(kind).map((run) => run.p50)),
        p99: median(of(kind).map((run) => run.p99)),
        cpu: median(of(kind).map((run) => run.cpu)),
      },
    ]),
  );
  const figures: ReadyFigures = {
    connections,
    byKind,
    batchOverUnpaid: perRound((unpaid, batch) => batch.p50 - unpaid.p50),
    exactOverUnpaid: perRound((unpaid, _batch, exact) => exact.p50 - unpaid.p50),
    batchPerCoreOverExact: perRound((_unpaid, batch, exact) => exact.cpu / batch.cpu),
  };
  const lines = [
    `ready payment headers (signed before the clock), GET, ${String(connections)} connection(s)`,
  ];
  for (const [kind, run] of byKind) {
    const perCore = kind === 'unpaid 402' ? '' : `  ${fmt(1e6 / run.cpu)} paid/s per core`;
    lines.push(
      `  ${kind.padEnd(10)} ${fmt(run.rate).padStart(7)} calls/s  p50 ${run.p50.toFixed(2)} ms  p99 ${run.p99.toFixed(2)} ms  server CPU ${fmt(run.cpu)} µs/call${perCore}`,
    );
  }
  lines.push(
    `  p50 over the unpaid 402 (per round, median): batch ${signed(figures.batchOverUnpaid)} ms, exact ${signed(figures.exactOverUnpaid)} ms`,
    `  batch/exact paid calls per core of the server: ${figures.batchPerCoreOverExact.toFixed(1)}x`,
  );
  return { lines, figures };
}

function summary(result: ReadyLoadResult, cpuMicros: number): Run {
  const sorted = [...result.latencies].sort((a, b) => a - b);
  return {
    rate: sorted.length / result.elapsedSeconds,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    cpu: cpuMicros / Math.max(1, sorted.length),
  };
}

/** The payer and transaction of each `exact` 200, from its receipt. */
function exactPayments(
  result: ReadyLoadResult,
  buyers: readonly Hex[],
): { payer: Hex; transaction: Hex }[] {
  const payers = new Set(buyers.map((key) => privateKeyToAccount(key).address.toLowerCase()));
  return result.receipts.map((receipt) => {
    const settlement = decodePaymentResponseHeader(receipt);
    const payer = (settlement.payer ?? '').toLowerCase();
    if (!payers.has(payer)) throw new Error(`exact: a receipt names payer ${payer}`);
    return { payer: payer as Hex, transaction: settlement.transaction as Hex };
  });
}

export function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

export function fmt(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(1)}k` : value.toFixed(value >= 100 ? 0 : 1);
}

function signed(value: number): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(2)}`;
}
