import { Logger } from '@nestjs/common';
import type { TimeoutSlot } from '../common/timeout-slot.js';
import { remoteText } from '../common/remote-text.js';
import { servedPrice } from '../common/price-precision.js';
import type { AggregatedPrice } from './aggregate.js';
import { isFresh, type PriceSnapshot } from './price-snapshot.js';
import type { SnapshotStore } from './snapshot-store.js';

/** One symbol's aggregated price as a ticker answer states it. */
export interface PriceChange {
  readonly symbol: string;
  /** Rounded as a ticker answer serves it (servedPrice). */
  readonly price: number;
  /** Epoch ms: when the snapshot was aggregated, the ticker answer's `timestamp`. */
  readonly timestamp: number;
  /** Venues whose quotes made the price. */
  readonly venues: number;
  /** (highest − lowest venue price) / price; null where no spread is known. */
  readonly spread: number | null;
  /** Epoch ms of the oldest input behind the price: the time a ticker answer's attestation signs. */
  readonly oldestInputAt: number;
}

/**
 * Every change of a symbol's aggregated price, on every instance (polling the shared snapshot
 * store every ~100 ms on instances that do not aggregate themselves).
 */
export abstract class PriceChanges {
  abstract subscribe(
    symbols: readonly string[],
    listener: (change: PriceChange) => void,
  ): () => void;
  abstract current(symbol: string): PriceChange | undefined;
}

/** How often an instance that does not aggregate reads the shared snapshot while someone listens. */
export const PRICE_CHANGES_POLL_MS = 100;

/** What PriceChanges needs of the aggregation: whether this instance aggregates, and its publications. */
export interface SnapshotPublisher {
  readonly polling: boolean;
  onPublished(listener: (snapshot: PriceSnapshot) => void): () => void;
}

type Listener = (change: PriceChange) => void;

/**
 * PriceChanges from the snapshots: pushed as this instance publishes each one, and read from the
 * (shared) store every PRICE_CHANGES_POLL_MS while anyone is subscribed and another instance
 * aggregates. A change is a new served (rounded) price of a fresh symbol; a symbol that goes
 * stale is forgotten, so its next fresh price is a change again. A reading instance learns
 * prices only while subscribed: its first read after being idle sets what the next change is
 * measured against and delivers nothing.
 */
export class SnapshotPriceChanges extends PriceChanges {
  private readonly logger = new Logger(PriceChanges.name);
  private readonly listeners = new Map<string, Set<Listener>>();
  private subscriptions = 0;
  private readonly known = new Map<string, KnownChange>();
  private appliedAsOf = Number.NEGATIVE_INFINITY;
  /** A reading instance's next read only records prices (after being idle). */
  private priming = true;
  private reading = false;
  private readFailing = false;

  constructor(
    private readonly publisher: SnapshotPublisher,
    private readonly store: SnapshotStore,
    private readonly staleMs: number,
    private readonly timer: TimeoutSlot,
    private readonly now: () => number = Date.now,
  ) {
    super();
    publisher.onPublished((snapshot) => {
      this.priming = false;
      this.apply(snapshot);
    });
  }

  subscribe(symbols: readonly string[], listener: Listener): () => void {
    const unique = [...new Set(symbols)];
    for (const symbol of unique) {
      let set = this.listeners.get(symbol);
      if (set === undefined) {
        set = new Set();
        this.listeners.set(symbol, set);
      }
      set.add(listener);
    }
    this.subscriptions += 1;
    if (this.subscriptions === 1) this.read();
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      for (const symbol of unique) {
        const set = this.listeners.get(symbol);
        set?.delete(listener);
        if (set?.size === 0) this.listeners.delete(symbol);
      }
      this.subscriptions -= 1;
      if (this.subscriptions === 0) this.idle();
    };
  }

  current(symbol: string): PriceChange | undefined {
    const change = this.known.get(symbol);
    if (change === undefined) return undefined;
    return this.now() - change.observedAt <= this.staleMs ? strip(change) : undefined;
  }

  /** Without subscribers a reading instance stops reading and forgets what it read. */
  private idle(): void {
    this.timer.clear();
    if (this.publisher.polling) return;
    this.known.clear();
    this.appliedAsOf = Number.NEGATIVE_INFINITY;
    this.priming = true;
  }

  /** One read of the store unless this instance publishes itself, then the next in ~100 ms. */
  private read(): void {
    if (this.subscriptions === 0 || this.reading) return;
    if (this.publisher.polling) {
      this.schedule();
      return;
    }
    this.reading = true;
    this.store
      .current()
      .then(
        (snapshot) => {
          this.readFailing = false;
          if (snapshot === undefined || this.subscriptions === 0) return;
          const priming = this.priming;
          this.priming = false;
          this.apply(snapshot, priming);
        },
        (error: unknown) => {
          if (!this.readFailing) {
            this.logger.warn(`price snapshot not read: ${remoteText(error)}`);
          }
          this.readFailing = true;
        },
      )
      .finally(() => {
        this.reading = false;
        this.schedule();
      });
  }

  private schedule(): void {
    if (this.subscriptions === 0) return;
    this.timer.set(PRICE_CHANGES_POLL_MS, () => {
      this.read();
    });
  }

  private apply(snapshot: PriceSnapshot, silent = false): void {
    if (snapshot.asOf <= this.appliedAsOf) return;
    this.appliedAsOf = snapshot.asOf;
    const now = this.now();
    for (const symbol of this.known.keys()) {
      const price = snapshot.prices.get(symbol);
      if (price === undefined || !isFresh(price, now, this.staleMs)) this.known.delete(symbol);
    }
    for (const [symbol, aggregated] of snapshot.prices) {
      if (!isFresh(aggregated, now, this.staleMs)) continue;
      const change = changeOf(aggregated, snapshot.asOf);
      const before = this.known.get(symbol);
      // kept either way, so current() answers as a ticker would now
      this.known.set(symbol, change);
      if (before?.price !== change.price && !silent) this.deliver(strip(change));
    }
  }

  private deliver(change: PriceChange): void {
    for (const listener of this.listeners.get(change.symbol) ?? []) {
      try {
        listener(change);
      } catch (error) {
        this.logger.error(`price change listener failed: ${remoteText(error)}`);
      }
    }
  }
}

type KnownChange = PriceChange & { readonly observedAt: number };

function changeOf(aggregated: AggregatedPrice, asOf: number): KnownChange {
  return {
    symbol: aggregated.symbol,
    price: servedPrice(aggregated.price),
    timestamp: asOf,
    venues: aggregated.sources.length,
    spread: Number.isFinite(aggregated.spread) ? aggregated.spread : null,
    oldestInputAt: aggregated.oldestInputAt,
    observedAt: aggregated.observedAt,
  };
}

function strip({ observedAt: _observedAt, ...change }: KnownChange): PriceChange {
  return change;
}
