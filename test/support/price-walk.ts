/**
 * The local stack's moving market: one bounded random walk that every recorded venue applies to
 * its prices at once, so the aggregated prices move (and a stream has updates to send) while
 * the venues keep agreeing, as the outlier rules need. Stablecoins do not move.
 */

export interface PriceWalkOptions {
  /** Seed of the walk's steps: the same seed makes the same walk. */
  readonly seed?: number;
  /** One move, in basis points of the recorded price (5 = ±0.05 %). */
  readonly stepBps?: number;
  /** The walk never goes further than this from the recorded price, in basis points (100 = 1 %). */
  readonly boundBps?: number;
  /** Time between moves while started. */
  readonly intervalMs?: number;
}

export const PRICE_WALK_DEFAULTS = {
  stepBps: 5,
  boundBps: 100,
  intervalMs: 300,
} as const;

/** One move: the new factor, and when it was made (epoch ms). */
export interface PriceMove {
  readonly factor: number;
  readonly at: number;
}

/** Instruments of the stablecoins that convert other quotes (USDT, USDC), by any venue's name. */
export function isStablecoinInstrument(instrument: string): boolean {
  return /^(usdt|usdc|tether$|usd-coin$)/i.test(instrument);
}

/** mulberry32: a small seeded generator, enough for a walk that must repeat itself. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A walk in whole steps: the factor is 1 + steps × stepBps / 10 000, so it stays exactly within
 * the bound however long it runs; at the bound the next step goes back.
 */
export class PriceWalk {
  readonly stepBps: number;
  readonly boundBps: number;
  readonly intervalMs: number;
  private readonly random: () => number;
  private readonly maxSteps: number;
  private steps = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(move: PriceMove) => void>();

  constructor(options: PriceWalkOptions = {}) {
    this.stepBps = options.stepBps ?? PRICE_WALK_DEFAULTS.stepBps;
    this.boundBps = options.boundBps ?? PRICE_WALK_DEFAULTS.boundBps;
    this.intervalMs = options.intervalMs ?? PRICE_WALK_DEFAULTS.intervalMs;
    if (!(this.stepBps > 0) || !(this.boundBps >= this.stepBps) || !(this.intervalMs > 0)) {
      throw new RangeError('a price walk needs stepBps > 0, boundBps ≥ stepBps, intervalMs > 0');
    }
    this.maxSteps = Math.floor(this.boundBps / this.stepBps);
    this.random = seededRandom(options.seed ?? 1);
  }

  /** What every moving price is multiplied by now. */
  get factor(): number {
    return 1 + (this.steps * this.stepBps) / 10_000;
  }

  /** Calls `listener` after every move; returns the unsubscribe. */
  onMove(listener: (move: PriceMove) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** One move up or down (back from the bound), told to the listeners. */
  step(): PriceMove {
    const up = this.random() < 0.5;
    if (this.steps >= this.maxSteps) this.steps -= 1;
    else if (this.steps <= -this.maxSteps) this.steps += 1;
    else this.steps += up ? 1 : -1;
    const move = { factor: this.factor, at: Date.now() };
    for (const listener of this.listeners) listener(move);
    return move;
  }

  /** Moves every intervalMs until stop(); the timer does not keep the process alive. */
  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => {
      this.step();
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
