import {
  TransactionReceiptNotFoundError,
  WaitForTransactionReceiptTimeoutError,
  type TransactionReceipt,
} from 'viem';
import { backoffDelay } from '../common/backoff.js';

/** The first wait after an unanswered ask: a local chain mines within a few milliseconds. */
const FIRST_WAIT_MS = 5;
/** The longest wait while the chain's block time is not known yet. */
const UNKNOWN_BLOCK_TIME_WAIT_MS = 250;
/** Never more than this between asks, whatever the block time. */
const MAX_WAIT_MS = 2_000;
/** A receipt is asked for about this many times per block once waits have grown. */
const ASKS_PER_BLOCK = 4;
/** The block time is measured again after this long (a chain's pace can change). */
const REMEASURE_AFTER_MS = 10 * 60_000;

/** The chain's average block interval in ms from its recent blocks, or undefined if too young. */
export type BlockTimeReader = () => Promise<number | undefined>;

/**
 * How long to wait between two asks for a receipt: starts at a few milliseconds and doubles,
 * up to a fraction of the chain's block time (measured from its recent blocks, again every
 * ten minutes) or `fixedMaxWaitMs` when configured. A local chain answers within the first few
 * asks; on Base, asks settle at a quarter of a block.
 */
export class ReceiptPacing {
  private maxWaitMs: number | undefined;
  private measuredAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly readBlockTime: BlockTimeReader,
    private readonly fixedMaxWaitMs?: number,
  ) {
    if (fixedMaxWaitMs === undefined) this.remeasureIfStale();
  }

  /** The wait before ask number `attempt + 1` (ask 0 is immediate). */
  waitAfter(attempt: number): number {
    return backoffDelay(attempt, { baseMs: FIRST_WAIT_MS, maxMs: this.longestWait() });
  }

  private longestWait(): number {
    if (this.fixedMaxWaitMs !== undefined) return this.fixedMaxWaitMs;
    this.remeasureIfStale();
    return this.maxWaitMs ?? UNKNOWN_BLOCK_TIME_WAIT_MS;
  }

  /** Starts a measurement in the background; until it answers, the previous estimate holds. */
  private remeasureIfStale(): void {
    const now = Date.now();
    if (now - this.measuredAt < REMEASURE_AFTER_MS) return;
    this.measuredAt = now;
    this.readBlockTime().then(
      (blockTimeMs) => {
        if (blockTimeMs === undefined) {
          this.measuredAt = Number.NEGATIVE_INFINITY;
          return;
        }
        this.maxWaitMs = Math.min(
          MAX_WAIT_MS,
          Math.max(FIRST_WAIT_MS, Math.round(blockTimeMs / ASKS_PER_BLOCK)),
        );
      },
      () => {
        // the chain did not answer: keep the last estimate and try again on the next wait
        this.measuredAt = Number.NEGATIVE_INFINITY;
      },
    );
  }
}

/**
 * Asks for a receipt until it exists or `timeoutMs` has passed, waiting `waitAfter(n)` after
 * the n-th unanswered ask. Not viem's `waitForTransactionReceipt`: its block watcher outlives a
 * settlement given up at its deadline and keeps polling forever if the RPC went silent. A failed
 * ask is asked again; the last error is reported at the time-out. Waiting holds no timer that
 * keeps the process alive.
 */
export async function pollReceipt(
  getReceipt: (hash: `0x${string}`) => Promise<TransactionReceipt>,
  hash: `0x${string}`,
  waitAfter: (attempt: number) => number,
  timeoutMs: number,
): Promise<TransactionReceipt> {
  const until = Date.now() + timeoutMs;
  let lastError: unknown;
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await getReceipt(hash);
    } catch (error) {
      if (!(error instanceof TransactionReceiptNotFoundError)) lastError = error;
    }
    const waitMs = waitAfter(attempt);
    if (Date.now() + waitMs > until) {
      throw lastError instanceof Error
        ? lastError
        : new WaitForTransactionReceiptTimeoutError({ hash });
    }
    await new Promise((resolve) => setTimeout(resolve, waitMs).unref());
  }
}
