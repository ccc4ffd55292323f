import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { PriceChanges, type PriceChange } from '../aggregation/price-changes.js';
import { isFresh } from '../aggregation/price-snapshot.js';
import { PRICING_SETTINGS, type PricingSettings } from '../aggregation/pricing.settings.js';
import { SNAPSHOT_STORE, type SnapshotStore } from '../aggregation/snapshot-store.js';
import { servedPrice } from '../tickers/index.js';

const POLL_MS = 100;

/**
 * PriceChanges read from the snapshot store (this instance's, or the shared one in Redis) every
 * 100 ms while any stream listens: a symbol's served price differing from the last one seen is
 * a change. A stale price is no change, nor is the first price seen of a symbol.
 */
@Injectable()
export class PolledPriceChanges extends PriceChanges implements OnModuleDestroy {
  private readonly listeners = new Map<string, Set<(change: PriceChange) => void>>();
  private readonly latest = new Map<string, PriceChange>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    @Inject(SNAPSHOT_STORE) private readonly store: SnapshotStore,
    @Inject(PRICING_SETTINGS.token) private readonly pricing: PricingSettings,
  ) {
    super();
  }

  subscribe(symbols: readonly string[], listener: (change: PriceChange) => void): () => void {
    for (const symbol of symbols) {
      let set = this.listeners.get(symbol);
      if (set === undefined) {
        set = new Set();
        this.listeners.set(symbol, set);
      }
      set.add(listener);
    }
    this.timer ??= setInterval(() => void this.poll(), POLL_MS);
    return () => {
      for (const symbol of symbols) {
        const set = this.listeners.get(symbol);
        set?.delete(listener);
        if (set?.size === 0) this.listeners.delete(symbol);
      }
      if (this.listeners.size === 0) this.stop();
    };
  }

  current(symbol: string): PriceChange | undefined {
    return this.latest.get(symbol);
  }

  onModuleDestroy(): void {
    this.stop();
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const snapshot = await this.store.current();
      if (snapshot === undefined) return;
      const now = Date.now();
      for (const [symbol, listeners] of this.listeners) {
        const aggregated = snapshot.prices.get(symbol);
        if (aggregated === undefined || !isFresh(aggregated, now, this.pricing.staleMs)) continue;
        const price = servedPrice(aggregated.price);
        const known = this.latest.get(symbol);
        if (known?.price === price) continue;
        const change: PriceChange = {
          symbol,
          price,
          timestamp: snapshot.asOf,
          venues: aggregated.sources.length,
          spread: aggregated.spread,
        };
        this.latest.set(symbol, change);
        // the first price seen is where changes start from, not a change itself
        if (known === undefined) continue;
        for (const listener of listeners) listener(change);
      }
    } catch {
      // the store unreadable for a poll: the next one reads it again
    } finally {
      this.polling = false;
    }
  }
}
