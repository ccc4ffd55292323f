import type { PriceChange } from '../aggregation/price-changes.js';

export interface CoalescerOptions {
  /** Send a symbol's change only when it moved at least this many basis points since the last sent. */
  readonly minMoveBps: number;
  /** At most this many sends per symbol per second. */
  readonly maxHz: number;
}

/** Float noise allowed at the minMoveBps boundary, in basis points: a move of exactly N bps is N bps. */
const BOUNDARY_BPS = 1e-9;

/**
 * Per stream: which changes to send and when. minMoveBps against the last SENT price of the
 * symbol; at most maxHz sends per symbol per second; while the writer is busy (slow reader),
 * changes coalesce per symbol, newest wins — never a queue longer than the symbol count.
 * One writer: it awaits next(), writes, confirms with sent(), and asks again.
 */
export class UpdateCoalescer {
  /** The newest change per symbol not handed out yet; first-offered symbol first. */
  private readonly pending = new Map<string, PriceChange>();
  private readonly lastSentPrice = new Map<string, number>();
  private readonly lastHandedAt = new Map<string, number>();
  private readonly intervalMs: number;
  private waiter: ((change: PriceChange | undefined) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly options: CoalescerOptions,
    private readonly now: () => number = Date.now,
  ) {
    if (!(options.minMoveBps >= 0) || !Number.isFinite(options.minMoveBps)) {
      throw new RangeError(`minMoveBps must be a finite number ≥ 0, not ${options.minMoveBps}`);
    }
    if (!(options.maxHz > 0) || !Number.isFinite(options.maxHz)) {
      throw new RangeError(`maxHz must be a finite number > 0, not ${options.maxHz}`);
    }
    this.intervalMs = 1000 / options.maxHz;
  }

  /** How many changes wait to be handed out (at most one per symbol). */
  get size(): number {
    return this.pending.size;
  }

  offer(change: PriceChange): void {
    if (this.closed) return;
    if (!this.movedEnough(change)) {
      // the newest price is back near the last sent one: an older pending move is moot
      this.pending.delete(change.symbol);
      return;
    }
    this.pending.set(change.symbol, change);
    this.wake();
  }

  /** Resolves with the next change due to be sent (waits while none is due); undefined after close(). */
  next(): Promise<PriceChange | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    if (this.waiter !== undefined) throw new Error('next() is already waiting: one writer only');
    const due = this.takeDue();
    if (due !== undefined) return Promise.resolve(due);
    return new Promise((resolve) => {
      this.waiter = resolve;
      this.armTimer();
    });
  }

  /**
   * The change to send in place of `change`, handed out earlier and held back since (the socket
   * was full): a newer pending change of its symbol wins, and is taken.
   */
  newest(change: PriceChange): PriceChange {
    const newer = this.pending.get(change.symbol);
    if (newer === undefined) return change;
    this.pending.delete(change.symbol);
    return newer;
  }

  /** The writer confirms what it sent (the basis for minMoveBps). */
  sent(change: PriceChange): void {
    this.lastSentPrice.set(change.symbol, change.price);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending.clear();
    this.clearTimer();
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.(undefined);
  }

  private movedEnough(change: PriceChange): boolean {
    const last = this.lastSentPrice.get(change.symbol);
    if (last === undefined || this.options.minMoveBps === 0) return true;
    if (last === 0) return change.price !== 0;
    const movedBps = (Math.abs(change.price - last) / Math.abs(last)) * 10_000;
    return movedBps + BOUNDARY_BPS >= this.options.minMoveBps;
  }

  private dueAt(symbol: string): number {
    const handed = this.lastHandedAt.get(symbol);
    return handed === undefined ? Number.NEGATIVE_INFINITY : handed + this.intervalMs;
  }

  /** The first-offered pending change that is due now and still a move worth sending. */
  private takeDue(): PriceChange | undefined {
    const now = this.now();
    for (const [symbol, change] of this.pending) {
      if (!this.movedEnough(change)) {
        this.pending.delete(symbol);
        continue;
      }
      if (this.dueAt(symbol) > now) continue;
      this.pending.delete(symbol);
      this.lastHandedAt.set(symbol, now);
      return change;
    }
    return undefined;
  }

  private wake(): void {
    if (this.waiter === undefined) return;
    const due = this.takeDue();
    if (due === undefined) {
      this.armTimer();
      return;
    }
    const waiter = this.waiter;
    this.waiter = undefined;
    this.clearTimer();
    waiter(due);
  }

  /** While next() waits: a timer for the earliest pending change held back by maxHz. */
  private armTimer(): void {
    this.clearTimer();
    let earliest = Number.POSITIVE_INFINITY;
    for (const symbol of this.pending.keys()) earliest = Math.min(earliest, this.dueAt(symbol));
    if (earliest === Number.POSITIVE_INFINITY) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.wake();
      },
      Math.max(0, Math.ceil(earliest - this.now())),
    );
  }

  private clearTimer(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
