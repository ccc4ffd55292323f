/**
 * Paid price streams on one instance (section 9 of `npm run bench`, or `npm run bench:streams`):
 * 100, then 1,000 concurrent `GET /v1/stream/BTC` on one product process whose five streaming
 * venues (fake WebSocket streams, no REST venue) follow one price walk run in this process, a
 * move every WALK_MS. Each level has buyers of its own, each with one batch-settlement channel
 * opened by one paid ticker (deposit); every stream on a channel signs a fresh voucher of its
 * own (the charged total plus a budget, above the channel's last cover, as the service asks),
 * so the channel's streams share its growing cover. STREAM_MAX_PER_PAYER is raised for that,
 * and HTTP_MAX_CONNECTIONS (default 1024) for 1,000 open streams.
 *
 * Per level, over a window of WINDOW_MS: the updates delivered per second per core of the
 * service (events received / the service's CPU seconds), venue move → event p50 and p95 (from the
 * walk's move to this process receiving the event, the move found by the event's price), the
 * service's RSS, and whether every stream was served (opened with 200, got updates, never ended).
 * Floors: p50 ≤ 150 ms, RSS ≤ 400 MB at 1,000, every stream served. Bounded: about a minute.
 */
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentRequirements } from '@x402/core/types';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import http from 'node:http';
import type { LocalChain } from '../test/support/chain.js';
import { FakeMarkets } from '../test/support/fake-markets.js';
import { FakeStreams, STREAMING_VENUES } from '../test/support/fake-streams.js';
import { fundedBuyer, USDC } from '../test/support/paying-clients.js';
import { PriceWalk, type PriceMove } from '../test/support/price-walk.js';
import { chargedNamed, streamVoucher, type PayingChannel } from './stream-vouchers.js';

const LEVELS = [
  { streams: 100, buyers: 10 },
  { streams: 1000, buyers: 50 },
] as const;
const WALK_MS = 250;
const WINDOW_MS = Number(process.env['BENCH_STREAM_WINDOW_MS'] ?? 8000);
/** Atomic USDC each channel's voucher covers: far more than a window's updates. */
const BUDGET = 500_000n;
const UNIT = 100n;
const P50_FLOOR_MS = 150;
const RSS_FLOOR_MB = 400;

/** The product process as the bench runs it. */
export interface StreamTarget {
  readonly url: string;
  usage(): Promise<{ readonly cpuMicros: number; readonly rss: number }>;
  stop(): Promise<void>;
}

export interface StreamsSectionContext {
  readonly chain: LocalChain;
  /** Starts a product process (dist/src) with this environment. */
  startProduct(env: Record<string, string>): Promise<StreamTarget>;
  /** Settlement and receipt settings of the bench's products (payTo, keys, RPC). */
  readonly productEnv: Record<string, string>;
}

interface Level {
  readonly streams: number;
  readonly served: number;
  /** Why the others were not, with counts. */
  readonly unserved: string;
  readonly events: number;
  readonly perCore: number;
  readonly p50: number;
  readonly p95: number;
  readonly rssMb: number;
}

/** One SSE connection counting its price events, each with its move latency. */
class CountingStream {
  events = 0;
  ended = false;
  status = 0;
  failure: string | undefined;
  private buffer = '';
  private request: http.ClientRequest | undefined;

  /** Opens the stream; a 402 resolves with its reason (the connection is dropped). */
  open(
    url: string,
    headers: Record<string, string>,
    onPrice: (price: number) => void,
  ): Promise<string | undefined> {
    return new Promise((resolve) => {
      this.request = http.get(
        url,
        { headers: { accept: 'text/event-stream', ...headers } },
        (response) => {
          this.status = response.statusCode ?? 0;
          const required = response.headers['payment-required'];
          if (this.status === 402 && typeof required === 'string') {
            response.resume();
            resolve(decodePaymentRequiredHeader(required).error ?? '');
            return;
          }
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            this.buffer += chunk;
            for (
              let end = this.buffer.indexOf('\n\n');
              end !== -1;
              end = this.buffer.indexOf('\n\n')
            ) {
              const block = this.buffer.slice(0, end);
              this.buffer = this.buffer.slice(end + 2);
              if (!block.startsWith('event: price')) continue;
              const data = block.slice(block.indexOf('data: ') + 6);
              const price = (JSON.parse(data) as { price: Record<string, number> }).price['BTC'];
              this.events += 1;
              if (price !== undefined) onPrice(price);
            }
          });
          const end = () => {
            this.ended = true;
          };
          response.on('end', end);
          response.on('close', end);
          // closing the stream at the end of a level aborts the response too
          response.on('error', end);
          resolve(undefined);
        },
      );
      // a stream that cannot be opened counts as not served; the level goes on
      this.request.on('error', (error) => {
        this.ended = true;
        this.failure ??= error.message;
        resolve(undefined);
      });
    });
  }

  close(): void {
    this.request?.destroy();
  }
}

/** Runs both levels and returns the lines to print. */
export async function streamsSection(context: StreamsSectionContext): Promise<string[]> {
  const walk = new PriceWalk({ seed: 2026, intervalMs: WALK_MS });
  const moves: PriceMove[] = [];
  walk.onMove((move) => moves.push(move));
  const markets = await FakeMarkets.start({ venues: STREAMING_VENUES, walk });
  const streams = await FakeStreams.start(STREAMING_VENUES, undefined, walk);
  const product = await context.startProduct({
    ...context.productEnv,
    ...markets.env(),
    ...streams.env(),
    STREAM_MAX_PER_PAYER: '1000',
    STREAM_MAX_PER_INSTANCE: '2000',
    // every stream comes from this one address
    STREAM_MAX_PER_CLIENT: '2000',
    // every stream holds a connection: room for 1,000 of them besides the buyers' requests
    HTTP_MAX_CONNECTIONS: '4096',
  });
  const lines = ['Paid price streams on one instance (GET /v1/stream/BTC, maxHz 10):'];
  try {
    const requirement = await streamRequirement(product.url);
    // the served price before the walk starts: an event's price over it names its move
    const base = await openChannels(context.chain, product.url, 1);
    walk.start();
    const levels: Level[] = [];
    for (const level of LEVELS) {
      levels.push(await runLevel(context.chain, product, requirement, level, moves, base.price));
      const last = levels[levels.length - 1];
      if (last === undefined) continue;
      lines.push(
        `  ${String(last.streams).padStart(5)} streams: ${last.served}/${last.streams} served, ` +
          `${last.events} updates, ${Math.round(last.perCore)} updates/s per core of the service, ` +
          `move → event p50 ${last.p50} ms p95 ${last.p95} ms, RSS ${last.rssMb} MB` +
          (last.unserved === '' ? '' : ` (not served: ${last.unserved})`),
      );
    }
    const top = levels[levels.length - 1];
    if (top === undefined) return lines;
    const floors: [string, boolean][] = [
      [
        `move → event p50 ≤ ${P50_FLOOR_MS} ms at every level`,
        levels.every((l) => l.p50 <= P50_FLOOR_MS),
      ],
      [`RSS ≤ ${RSS_FLOOR_MB} MB at ${top.streams} streams`, top.rssMb <= RSS_FLOOR_MB],
      ['every stream served', levels.every((l) => l.served === l.streams)],
    ];
    for (const [floor, held] of floors) lines.push(`  floor ${floor}: ${held ? 'ok' : 'MISSED'}`);
  } finally {
    walk.stop();
    await product.stop();
    await streams.close();
    await markets.close();
  }
  return lines;
}

/** The stream's 402 offer, once the product has a price to sell (its venues answered). */
async function streamRequirement(url: string): Promise<PaymentRequirements> {
  const until = Date.now() + 20_000;
  let response = await fetch(`${url}/v1/stream/BTC`);
  while (response.status === 503 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    response = await fetch(`${url}/v1/stream/BTC`);
  }
  const header = response.headers.get('payment-required');
  if (response.status !== 402 || header === null) {
    throw new Error(`GET /v1/stream/BTC answered ${response.status}, not a 402`);
  }
  const offer = decodePaymentRequiredHeader(header).accepts[0];
  if (offer === undefined) throw new Error('the stream 402 offers nothing');
  return offer;
}

/** `count` buyers, each with a channel opened by one paid ticker: its scheme and the BTC price. */
async function openChannels(
  chain: LocalChain,
  url: string,
  count: number,
): Promise<{ buyers: PayingChannel[]; price: number }> {
  let price = Number.NaN;
  const buyers = await Promise.all(
    Array.from({ length: count }, async () => {
      const buyer = await fundedBuyer(chain, 10n * USDC);
      const scheme = new BatchSettlementEvmScheme(buyer.account, {
        rpcUrl: chain.rpcUrl,
        depositStrategy: () => (2n * USDC).toString(),
      });
      const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:*', scheme));
      const response = await pay(`${url}/v1/ticker/BTC`);
      if (response.status !== 200) throw new Error(`opening a channel: HTTP ${response.status}`);
      price = ((await response.json()) as { price: { BTC: number } }).price.BTC;
      return { scheme, account: buyer.account, cover: 0n };
    }),
  );
  return { buyers, price };
}

async function runLevel(
  chain: LocalChain,
  product: StreamTarget,
  requirement: PaymentRequirements,
  level: (typeof LEVELS)[number],
  moves: readonly PriceMove[],
  basePrice: number,
): Promise<Level> {
  const { buyers } = await openChannels(chain, product.url, level.buyers);
  // what each channel's record said at its ticker; a 402 names the charged total since
  const charged = await Promise.all(
    buyers.map(async (buyer) => {
      const probe = await buyer.scheme.createPaymentPayload(2, { ...requirement, amount: '100' });
      const max = (probe.payload as { voucher: { maxClaimableAmount: string } }).voucher;
      return BigInt(max.maxClaimableAmount) - UNIT;
    }),
  );
  const latencies: number[] = [];
  let measuring = false;
  const onPrice = (price: number): void => {
    if (!measuring) return;
    const receivedAt = Date.now();
    const move = causingMove(moves, price / basePrice, receivedAt);
    if (move !== undefined) latencies.push(receivedAt - move.at);
  };
  const clients = Array.from({ length: level.streams }, () => new CountingStream());
  // stream i pays through buyer i % buyers with a voucher of its own; a channel's streams open
  // one at a time, each re-signed on the charged total a refusal names (its updates go on)
  const open = async (index: number): Promise<void> => {
    const client = clients[index] ?? new CountingStream();
    const slot = index % level.buyers;
    const buyer = buyers[slot];
    if (buyer === undefined) return;
    for (let tries = 0; tries < 100; tries += 1) {
      const headers = await streamVoucher(buyer, requirement, charged[slot] ?? 0n, BUDGET);
      const refusal = await client.open(`${product.url}/v1/stream/BTC?maxHz=10`, headers, onPrice);
      const named = refusal === undefined ? undefined : chargedNamed(refusal);
      if (named === undefined) {
        if (refusal !== undefined) client.failure = `HTTP 402 ${refusal.split(':')[0] ?? ''}`;
        return;
      }
      charged[slot] = named;
    }
    client.failure = 'HTTP 402: the charged total kept moving';
  };
  for (let start = 0; start < clients.length; start += level.buyers) {
    const end = Math.min(clients.length, start + level.buyers);
    await Promise.all(Array.from({ length: end - start }, (_, offset) => open(start + offset)));
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const before = await product.usage();
  const eventsBefore = clients.reduce((sum, client) => sum + client.events, 0);
  measuring = true;
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
  measuring = false;
  const after = await product.usage();
  const events = clients.reduce((sum, client) => sum + client.events, 0) - eventsBefore;
  // served: opened with 200, got updates, still open at the end of the window
  const served = clients.filter((c) => c.status === 200 && c.events > 0 && !c.ended).length;
  const unserved = new Map<string, number>();
  for (const client of clients) {
    if (client.status === 200 && client.events > 0 && !client.ended) continue;
    const why =
      client.failure ??
      (client.status === 200 ? (client.ended ? 'ended' : 'no update') : `HTTP ${client.status}`);
    unserved.set(why, (unserved.get(why) ?? 0) + 1);
  }
  for (const client of clients) client.close();
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  const cpuSeconds = (after.cpuMicros - before.cpuMicros) / 1e6;
  return {
    streams: level.streams,
    served,
    unserved: [...unserved].map(([why, count]) => `${count} ${why}`).join(', '),
    events,
    perCore: events / cpuSeconds,
    p50: at(0.5),
    p95: at(0.95),
    rssMb: Math.round(after.rss / 2 ** 20),
  };
}

/**
 * The latest move at or before `receivedAt` whose factor the event's price shows (within half a
 * step); the venues all move together, so the served price is the recorded one times the factor.
 */
function causingMove(
  moves: readonly PriceMove[],
  factor: number,
  receivedAt: number,
): PriceMove | undefined {
  for (let index = moves.length - 1; index >= 0; index -= 1) {
    const move = moves[index];
    if (move === undefined || move.at > receivedAt) continue;
    if (Math.abs(move.factor - factor) < 0.00025) return move;
    if (receivedAt - move.at > 5000) return undefined;
  }
  return undefined;
}
