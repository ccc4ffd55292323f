/**
 * A paid `/v1/markets` of 25 symbols against a paid `/v1/ticker/BTC`, in the same run on the same
 * product, with the buyers' work off the clock (ready-headers.ts): at 1 connection, four loads
 * alternate round by round with the order rotating, each on a fresh connection: `batch-settlement`
 * vouchers and `exact` payments for each route. Per load: rate, p50, p99 and the server's CPU
 * per call; per round and scheme, the markets p50 minus the ticker p50 and the CPU ratio, whose
 * medians over the rounds are printed (issue 47 asks for markets within +1 ms p50 of the ticker).
 */
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequirements } from '@x402/core/types';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { LocalChain } from '../test/support/chain.js';
import { USDC } from '../test/support/paying-clients.js';
import { VoucherChannel, exactHeaders, readyLoad, type ReadyLoadResult } from './ready-headers.js';

/** 25 symbols every fake venue fixture set prices and has 24-hour statistics for. */
export const MARKETS_25 = [
  'BTC',
  'ETH',
  'SOL',
  'BNB',
  'ADA',
  'AVAX',
  'DOGE',
  'LINK',
  'LTC',
  'DOT',
  'UNI',
  'AAVE',
  'ATOM',
  'NEAR',
  'FIL',
  'ARB',
  'OP',
  'APT',
  'SUI',
  'TRX',
  'ETC',
  'BCH',
  'HBAR',
  'ICP',
  'INJ',
] as const;
export const MARKETS_PATH = `/v1/markets/${MARKETS_25.join(',')}`;
export const TICKER_PATH = '/v1/ticker/BTC';

type Route = 'ticker' | 'markets';
type Scheme = 'batch' | 'exact';
interface Kind {
  readonly route: Route;
  readonly scheme: Scheme;
}
const KINDS: readonly Kind[] = [
  { route: 'ticker', scheme: 'batch' },
  { route: 'markets', scheme: 'batch' },
  { route: 'ticker', scheme: 'exact' },
  { route: 'markets', scheme: 'exact' },
];
const label = (kind: Kind): string => `${kind.route} ${kind.scheme}`;

/** What the section needs of the bench: the product, its CPU clock and the on-chain checks. */
export interface MarketsSectionContext {
  readonly url: string;
  readonly chain: LocalChain;
  readonly rounds: number;
  readonly seconds: number;
  /** The product's CPU time so far, in µs. */
  cpuMicros(): Promise<number>;
  /** Every `exact` 200 moved exactly `price` from its payer to the seller. */
  checkExact(payments: readonly { payer: Hex; transaction: Hex }[], price: bigint): Promise<void>;
  /** Batch 200s at `price` each, claimed at the end of the run. */
  countBatch(paid: number, price: bigint): void;
}

interface Run {
  readonly rate: number;
  readonly p50: number;
  readonly p99: number;
  /** The server's CPU per answer, µs. */
  readonly cpu: number;
}

/** Runs the section; its lines. `challenges` are each route's unpaid 402 `PAYMENT-REQUIRED`. */
export async function marketsSection(
  context: MarketsSectionContext,
  challenges: Readonly<Record<Route, string>>,
): Promise<string[]> {
  const paths: Record<Route, string> = { ticker: TICKER_PATH, markets: MARKETS_PATH };
  const prices: Record<Route, bigint> = {
    ticker: priceOf(challenges.ticker),
    markets: priceOf(challenges.markets),
  };
  const channels = {
    ticker: await VoucherChannel.open(context.chain, `${context.url}${TICKER_PATH}`),
    // The official client's deposit on /v1/markets echoes that 402's extensions, which pass the
    // product's 8192-character PAYMENT-SIGNATURE limit (400 invalid_payment): the channel is
    // opened on the ticker and its vouchers then pay the markets route's own requirements.
    markets: (await VoucherChannel.open(context.chain, `${context.url}${TICKER_PATH}`)).paying(
      batchRequirements(challenges.markets),
    ),
  };
  // the deposits' own paid calls, both on the ticker
  context.countBatch(2, prices.ticker);
  const buyer = generatePrivateKey();
  await context.chain.mintUsdc(privateKeyToAccount(buyer).address, 100n * USDC);
  // a guess for the first run; then 1.5x what the last run of the kind needed
  const need = new Map<string, number>(
    KINDS.map((kind) => [label(kind), (kind.scheme === 'batch' ? 3000 : 300) * context.seconds]),
  );
  const runOnce = async (kind: Kind): Promise<Run> => {
    const count = need.get(label(kind)) ?? 0;
    let source: () => string | undefined;
    if (kind.scheme === 'batch') {
      const channel = channels[kind.route];
      channel.prepare(count);
      source = () => channel.next();
    } else {
      const ready = await exactHeaders(buyer, challenges[kind.route], count);
      source = () => ready.shift();
    }
    const before = await context.cpuMicros();
    const result = await readyLoad(context.url, paths[kind.route], [source], 200, context.seconds);
    const after = await context.cpuMicros();
    const price = prices[kind.route];
    if (kind.scheme === 'batch') context.countBatch(result.latencies.length, price);
    else await context.checkExact(exactPayments(result, buyer), price);
    const rate = result.latencies.length / result.elapsedSeconds;
    need.set(label(kind), Math.ceil(rate * context.seconds * 1.5) + 20);
    return summary(result, after - before);
  };
  for (const kind of KINDS) await runOnce(kind); // a first run each, not counted
  const runs = new Map<string, Run[]>(KINDS.map((kind) => [label(kind), []]));
  for (let round = 0; round < context.rounds; round += 1) {
    const order = [...KINDS.slice(round % 4), ...KINDS.slice(0, round % 4)];
    for (const kind of order) runs.get(label(kind))?.push(await runOnce(kind));
  }
  return report(runs);
}

function report(runs: ReadonlyMap<string, readonly Run[]>): string[] {
  const of = (route: Route, scheme: Scheme): readonly Run[] =>
    runs.get(label({ route, scheme })) ?? [];
  const lines = [
    `paid GET ${MARKETS_PATH} (25 symbols) vs paid GET ${TICKER_PATH}, ready payment headers, 1 connection`,
  ];
  for (const kind of KINDS) {
    const all = of(kind.route, kind.scheme);
    const at = (f: (run: Run) => number): number => median(all.map(f));
    lines.push(
      `  ${label(kind).padEnd(14)} ${fmt(at((r) => r.rate)).padStart(7)} calls/s  p50 ${at((r) => r.p50).toFixed(2)} ms  p99 ${at((r) => r.p99).toFixed(2)} ms  server CPU ${fmt(at((r) => r.cpu))} µs/call`,
    );
  }
  for (const scheme of ['batch', 'exact'] as const) {
    const pairs = of('markets', scheme).flatMap((markets, i) => {
      const ticker = of('ticker', scheme)[i];
      return ticker === undefined ? [] : [{ markets, ticker }];
    });
    const p50 = median(pairs.map(({ markets, ticker }) => markets.p50 - ticker.p50));
    const cpu = median(pairs.map(({ markets, ticker }) => markets.cpu - ticker.cpu));
    const ratio = median(pairs.map(({ markets, ticker }) => markets.cpu / ticker.cpu));
    lines.push(
      `  ${scheme}: markets - ticker (per round, median): p50 ${signed(p50)} ms, server CPU ${signed(cpu, 0)} µs/call (${ratio.toFixed(2)}x)`,
    );
  }
  return lines;
}

function batchRequirements(challenge: string): PaymentRequirements {
  const batch = decodePaymentRequiredHeader(challenge).accepts.find(
    (accept) => accept.scheme === 'batch-settlement',
  );
  if (batch === undefined) throw new Error('the 402 offers no batch-settlement payment');
  return batch;
}

function priceOf(challenge: string): bigint {
  const exact = decodePaymentRequiredHeader(challenge).accepts.find(
    (accept) => accept.scheme === 'exact',
  );
  if (exact === undefined) throw new Error('the 402 offers no exact payment');
  return BigInt(exact.amount);
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
function exactPayments(result: ReadyLoadResult, buyer: Hex): { payer: Hex; transaction: Hex }[] {
  const expected = privateKeyToAccount(buyer).address.toLowerCase();
  return result.receipts.map((receipt) => {
    const settlement = decodePaymentResponseHeader(receipt);
    const payer = (settlement.payer ?? '').toLowerCase();
    if (payer !== expected) throw new Error(`exact: a receipt names payer ${payer}`);
    return { payer: payer as Hex, transaction: settlement.transaction as Hex };
  });
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

function fmt(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(1)}k` : value.toFixed(value >= 100 ? 0 : 1);
}

function signed(value: number, digits = 2): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`;
}
