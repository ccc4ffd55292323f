import {
  BaseError,
  HttpRequestError,
  RpcRequestError,
  TimeoutError,
  createPublicClient,
  defineChain,
  formatUnits,
  http,
  parseAbi,
  type Address,
} from 'viem';
import type { PriceSource, RawQuote, UpdateRule } from './price-source.js';
import { VenueError } from './venue-error.js';
import { RATE_LIMIT_STATUSES, retryAfterMs } from './venue-http.js';

/** The read-only part of Chainlink's AggregatorV3Interface that this source calls. */
export const AGGREGATOR_V3_ABI = parseAbi([
  'function decimals() view returns (uint8)',
  'function description() view returns (string)',
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
]);

export interface ChainlinkConfig {
  readonly rpcUrl: string;
  /** Feed proxy address by our symbol; each must describe itself as `<SYM> / USD`. */
  readonly feeds: Readonly<Record<string, Address>>;
  /** Heartbeat and deviation threshold by symbol, where known: the feed's own staleness rule. */
  readonly updateRules: Readonly<Record<string, UpdateRule>>;
}

/** A feed whose description matched, with the decimals its answers are scaled by. */
export interface ChainlinkFeed {
  readonly symbol: string;
  readonly address: Address;
  readonly decimals: number;
  /** When known, its answer counts as current within this rule (docs/pricing.md). */
  readonly updateRule?: UpdateRule;
}

export interface ChainlinkRound {
  readonly answer: bigint;
  /** Unix seconds of the round's last update; 0 for a round not yet complete. */
  readonly updatedAt: bigint;
}

/** Scaling beyond this is no price feed's; the same ceiling as X402_ASSET_DECIMALS. */
const MAX_DECIMALS = 36;
/** Base makes a block every 2 s: reading more often cannot see a new round. */
const BASE_BLOCK_TIME_MS = 2000;

/**
 * Base mainnet as far as these reads need it: its id and Multicall3, deployed at the same
 * address on every chain that has it. Defined here because `viem/chains` loads all of viem's
 * ~740 chain definitions (about 7 MB of live heap) to name one.
 */
const BASE = defineChain({
  id: 8453,
  name: 'Base',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: [] } },
  contracts: { multicall3: { address: '0xcA11bde05977b3631167028862bE2a173976CA11' } },
});

function baseClient(rpcUrl: string, timeoutMs: number) {
  // the refresh timer is the retry: a failed read waits for the next round
  const transport = http(rpcUrl, { timeout: timeoutMs, retryCount: 0 });
  return createPublicClient({ chain: BASE, transport });
}

/**
 * Chainlink USD price feeds on Base, read over JSON-RPC in one multicall per refresh. Every
 * feed's decimals() and description() are checked on the first call; until all of them match,
 * the source fails whole rather than serve a feed that may not be what its symbol says.
 */
export class ChainlinkSource implements PriceSource {
  readonly id = 'chainlink';
  readonly minIntervalMs = BASE_BLOCK_TIME_MS;
  private readonly client: ReturnType<typeof baseClient>;
  private feeds: readonly ChainlinkFeed[] | undefined;

  constructor(
    private readonly config: ChainlinkConfig,
    timeoutMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.client = baseClient(config.rpcUrl, timeoutMs);
  }

  async fetchQuotes(): Promise<RawQuote[]> {
    try {
      const feeds = await this.validatedFeeds();
      const rounds = await this.client.multicall({
        contracts: feeds.map((feed) => ({
          address: feed.address,
          abi: AGGREGATOR_V3_ABI,
          functionName: 'latestRoundData' as const,
        })),
      });
      throwOnOutage(rounds);
      const receivedAt = this.now();
      return feeds.flatMap((feed, index) => {
        const round = rounds[index];
        if (round?.status !== 'success') return [];
        const [, answer, , updatedAt] = round.result;
        return chainlinkQuote(feed, { answer, updatedAt }, receivedAt) ?? [];
      });
    } catch (error) {
      throw asVenueError(error);
    }
  }

  private async validatedFeeds(): Promise<readonly ChainlinkFeed[]> {
    this.feeds ??= await this.readFeeds();
    return this.feeds;
  }

  /** Reads every feed's decimals() and description(); refuses all of them if one is wrong. */
  private async readFeeds(): Promise<ChainlinkFeed[]> {
    const entries = Object.entries(this.config.feeds);
    const [decimals, descriptions] = await Promise.all([
      this.client.multicall({
        contracts: entries.map(([, address]) => ({
          address,
          abi: AGGREGATOR_V3_ABI,
          functionName: 'decimals' as const,
        })),
      }),
      this.client.multicall({
        contracts: entries.map(([, address]) => ({
          address,
          abi: AGGREGATOR_V3_ABI,
          functionName: 'description' as const,
        })),
      }),
    ]);
    throwOnOutage([...decimals, ...descriptions]);
    const checked = entries.map(([symbol, address], index) =>
      checkedFeed(symbol, address, decimals[index], descriptions[index], this.config.updateRules),
    );
    const problems = checked.filter((feed) => typeof feed === 'string');
    if (problems.length > 0) {
      throw new VenueError('invalid_body', `feeds refused: ${problems.join('; ')}`);
    }
    return checked.filter((feed) => typeof feed !== 'string');
  }
}

type MulticallRead<T> = { status: 'success'; result: T } | { status: 'failure' };

/** A configured feed with its decimals, or why it is refused. */
function checkedFeed(
  symbol: string,
  address: Address,
  decimals: MulticallRead<number> | undefined,
  description: MulticallRead<string> | undefined,
  updateRules: Readonly<Record<string, UpdateRule>>,
): ChainlinkFeed | string {
  if (decimals?.status !== 'success' || description?.status !== 'success') {
    return `${symbol} at ${address} does not answer decimals() and description()`;
  }
  const problem = feedProblem(symbol, decimals.result, description.result);
  if (problem !== undefined) return `${symbol} at ${address} ${problem}`;
  const updateRule = updateRules[symbol];
  return {
    symbol,
    address,
    decimals: decimals.result,
    ...(updateRule === undefined ? {} : { updateRule }),
  };
}

/** Why a feed cannot serve `symbol` in USD, or undefined when it can. */
export function feedProblem(
  symbol: string,
  decimals: number,
  description: string,
): string | undefined {
  const expected = `${symbol} / USD`;
  if (description !== expected) return `describes itself as "${description}", not "${expected}"`;
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > MAX_DECIMALS) {
    return `has ${decimals} decimals`;
  }
  return undefined;
}

/**
 * A feed's latest round as a USD quote observed at its update time (never after receipt), or
 * undefined for a non-positive answer or a round that has no update time.
 */
export function chainlinkQuote(
  feed: ChainlinkFeed,
  round: ChainlinkRound,
  receivedAt: number,
): RawQuote | undefined {
  if (round.answer <= 0n || round.updatedAt <= 0n) return undefined;
  const price = Number(formatUnits(round.answer, feed.decimals));
  if (!Number.isFinite(price) || price <= 0) return undefined;
  return {
    source: 'chainlink',
    symbol: feed.symbol,
    quote: 'USD',
    price,
    observedAt: Math.min(Number(round.updatedAt) * 1000, receivedAt),
    ...(feed.updateRule === undefined ? {} : { updateRule: feed.updateRule }),
  };
}

/** multicall turns an RPC that failed into a failure of every call: that is no bad feed. */
function throwOnOutage(results: readonly { status: string; error?: unknown }[]): void {
  for (const result of results) {
    if (result.status === 'failure' && isTransportError(result.error)) throw result.error;
  }
}

function isTransportError(error: unknown): boolean {
  const transport = (cause: unknown) =>
    cause instanceof HttpRequestError ||
    cause instanceof TimeoutError ||
    cause instanceof RpcRequestError;
  return error instanceof BaseError && error.walk(transport) !== null;
}

/** viem's short messages only: its long ones include the RPC URL, which may hold an API key. */
function asVenueError(error: unknown): VenueError {
  if (error instanceof VenueError) return error;
  if (!(error instanceof BaseError)) {
    return new VenueError('network', error instanceof Error ? error.message : String(error));
  }
  if (error.walk((cause) => cause instanceof TimeoutError) !== null) {
    return new VenueError('timeout', error.shortMessage);
  }
  const http = error.walk((cause) => cause instanceof HttpRequestError);
  if (http instanceof HttpRequestError && RATE_LIMIT_STATUSES.has(http.status ?? 0)) {
    const retryAfter = retryAfterMs(http.headers?.get('retry-after') ?? null);
    return new VenueError('rate_limited', `HTTP ${http.status ?? 0}`, retryAfter);
  }
  return new VenueError('network', error.shortMessage);
}
