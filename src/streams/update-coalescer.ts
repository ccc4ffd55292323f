import type { PriceChange } from '../aggregation/price-changes.js';

/**
 * Per stream: which changes to send and when. minMoveBps against the last SENT price of the
 * symbol; at most maxHz sends per symbol per second; while the writer is busy (slow reader),
 * changes coalesce per symbol, newest wins — never a queue longer than the symbol count.
 */
export class UpdateCoalescer {
  /** The newest change not yet sent, per symbol, in the order the symbols became pending. */
  private readonly pending = new Map<string, PriceChange>();
  private readonly lastSent = new Map<string, { price: number; at: number }>();
  private wake: (() => void) | undefined;
  private closed = false;
  private readonly intervalMs: number;

  constructor(
    private readonly options: { minMoveBps: number; maxHz: number },
    private readonly now: () => number = Date.now,
  ) {
    this.intervalMs = 1000 / options.maxHz;
  }

  offer(change: PriceChange): void {
    if (this.closed) return;
    this.pending.delete(change.symbol);
    this.pending.set(change.symbol, change);
    this.wake?.();
  }

  /** Resolves with the next change due to be sent (waits while none is due); undefined after close(). */
  async next(): Promise<PriceChange | undefined> {
    for (;;) {
      if (this.closed) return undefined;
      const { due, waitMs } = this.takeDue();
      if (due !== undefined) return due;
      await new Promise<void>((resolve) => {
        const timer = waitMs === undefined ? undefined : setTimeout(resolve, waitMs);
        this.wake = () => {
          clearTimeout(timer);
          this.wake = undefined;
          resolve();
        };
      });
    }
  }

  /** The writer confirms what it sent (the basis for minMoveBps). */
  sent(change: PriceChange): void {
    this.lastSent.set(change.symbol, { price: change.price, at: this.now() });
  }

  close(): void {
    this.closed = true;
    this.pending.clear();
    this.wake?.();
  }

  /** The first pending change due now, or how long until one may be. */
  private takeDue(): { due?: PriceChange; waitMs?: number } {
    const now = this.now();
    let waitMs: number | undefined;
    for (const [symbol, change] of this.pending) {
      const last = this.lastSent.get(symbol);
      if (last !== undefined && movedBps(last.price, change.price) < this.options.minMoveBps) {
        this.pending.delete(symbol);
        continue;
      }
      const dueIn = last === undefined ? 0 : last.at + this.intervalMs - now;
      if (dueIn <= 0) {
        this.pending.delete(symbol);
        return { due: change };
      }
      waitMs = waitMs === undefined ? dueIn : Math.min(waitMs, dueIn);
    }
    return waitMs === undefined ? {} : { waitMs };
  }
}

function movedBps(from: number, to: number): number {
  return from === 0 ? Infinity : (Math.abs(to - from) / Math.abs(from)) * 10_000;
}
