import type { TimeoutSlot } from '../common/timeout-slot.js';
import type { AggregatedPrice } from './aggregate.js';
import {
  PRICE_CHANGES_POLL_MS,
  SnapshotPriceChanges,
  type PriceChange,
  type SnapshotPublisher,
} from './price-changes.js';
import type { PriceSnapshot } from './price-snapshot.js';
import { InMemorySnapshotStore } from './snapshot-store.js';

const STALE_MS = 5_000;

/** The aggregation as PriceChanges sees it: `polling` set by the test, publications by hand. */
class FakePublisher implements SnapshotPublisher {
  polling = true;
  private readonly listeners = new Set<(snapshot: PriceSnapshot) => void>();

  onPublished(listener: (snapshot: PriceSnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  publish(snapshot: PriceSnapshot): void {
    for (const listener of this.listeners) listener(snapshot);
  }
}

/** A timeout the test fires by hand, recording the delays asked for. */
class ManualTimeout implements TimeoutSlot {
  callback: (() => void) | undefined;
  readonly delays: number[] = [];

  get pending(): boolean {
    return this.callback !== undefined;
  }

  set(delayMs: number, callback: () => void): void {
    this.delays.push(delayMs);
    this.callback = callback;
  }

  clear(): void {
    this.callback = undefined;
  }

  fire(): void {
    const callback = this.callback;
    this.callback = undefined;
    callback?.();
  }
}

/** A store that counts its reads. */
class CountingStore extends InMemorySnapshotStore {
  reads = 0;

  override current(): Promise<PriceSnapshot | undefined> {
    this.reads += 1;
    return super.current();
  }
}

function aggregated(symbol: string, price: number, observedAt: number): AggregatedPrice {
  return {
    symbol,
    price,
    sources: ['coinbase', 'kraken', 'bitstamp'],
    observedAt,
    oldestInputAt: observedAt - 200,
    spread: 0.0004,
  };
}

function snapshot(asOf: number, prices: Record<string, number>): PriceSnapshot {
  return {
    asOf,
    prices: new Map(
      Object.entries(prices).map(([symbol, price]) => [symbol, aggregated(symbol, price, asOf)]),
    ),
  };
}

/** Lets the store's promise and what follows it settle. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await Promise.resolve();
}

function setup() {
  let now = 1_000_000;
  const publisher = new FakePublisher();
  const store = new CountingStore();
  const timer = new ManualTimeout();
  const changes = new SnapshotPriceChanges(publisher, store, STALE_MS, timer, () => now);
  return {
    publisher,
    store,
    timer,
    changes,
    at: (ms: number) => {
      now = ms;
    },
  };
}

describe('SnapshotPriceChanges on the instance that aggregates', () => {
  it('pushes each published change of a subscribed symbol as a ticker answer states it', () => {
    const { publisher, changes } = setup();
    const seen: PriceChange[] = [];
    changes.subscribe(['BTC'], (change) => seen.push(change));
    publisher.publish(snapshot(1_000_000, { BTC: 67123.456789, ETH: 3012.4 }));
    expect(seen).toEqual([
      {
        symbol: 'BTC',
        price: 67123.46,
        timestamp: 1_000_000,
        venues: 3,
        spread: 0.0004,
        oldestInputAt: 999_800,
      },
    ]);
  });

  it('sends a change only when the served (rounded) price differs', () => {
    const { publisher, changes, at } = setup();
    const prices: number[] = [];
    changes.subscribe(['BTC'], (change) => prices.push(change.price));
    publisher.publish(snapshot(1_000_000, { BTC: 67123.451 }));
    at(1_000_100);
    publisher.publish(snapshot(1_000_100, { BTC: 67123.454 })); // still 67123.45
    at(1_000_200);
    publisher.publish(snapshot(1_000_200, { BTC: 67123.456 }));
    expect(prices).toEqual([67123.45, 67123.46]);
  });

  it('answers current() with the latest snapshot, and nothing once the price is stale', () => {
    const { publisher, changes, at } = setup();
    publisher.publish(snapshot(1_000_000, { BTC: 67000 }));
    at(1_000_100);
    publisher.publish(snapshot(1_000_100, { BTC: 67000.001 }));
    expect(changes.current('BTC')).toMatchObject({ price: 67000, timestamp: 1_000_100 });
    expect(changes.current('ETH')).toBeUndefined();
    at(1_000_100 + STALE_MS + 1);
    expect(changes.current('BTC')).toBeUndefined();
  });

  it('treats a symbol fresh again after going stale as a change, and ignores an older snapshot', () => {
    const { publisher, changes, at } = setup();
    const prices: number[] = [];
    changes.subscribe(['BTC'], (change) => prices.push(change.price));
    publisher.publish(snapshot(1_000_000, { BTC: 67000 }));
    at(1_000_100);
    publisher.publish(snapshot(1_000_100, {}));
    at(1_000_200);
    publisher.publish(snapshot(1_000_200, { BTC: 67000 }));
    publisher.publish(snapshot(1_000_150, { BTC: 1 }));
    expect(prices).toEqual([67000, 67000]);
  });

  it('stops delivering to a listener that unsubscribed, and keeps the others', () => {
    const { publisher, changes } = setup();
    const first: number[] = [];
    const second: number[] = [];
    const stop = changes.subscribe(['BTC', 'ETH'], (change) => first.push(change.price));
    changes.subscribe(['ETH'], (change) => second.push(change.price));
    publisher.publish(snapshot(1_000_000, { BTC: 67000, ETH: 3000 }));
    stop();
    stop();
    publisher.publish(snapshot(1_000_100, { BTC: 67100, ETH: 3100 }));
    expect(first).toEqual([67000, 3000]);
    expect(second).toEqual([3000, 3100]);
  });

  it('keeps delivering to other listeners when one throws', () => {
    const { publisher, changes } = setup();
    const seen: number[] = [];
    changes.subscribe(['BTC'], () => {
      throw new Error('listener broke');
    });
    changes.subscribe(['BTC'], (change) => seen.push(change.price));
    publisher.publish(snapshot(1_000_000, { BTC: 67000 }));
    expect(seen).toEqual([67000]);
  });

  it('never reads the store while it publishes itself', async () => {
    const { store, timer, changes } = setup();
    changes.subscribe(['BTC'], () => undefined);
    timer.fire();
    timer.fire();
    await settle();
    expect(store.reads).toBe(0);
  });
});

describe('SnapshotPriceChanges on an instance that reads the shared store', () => {
  function reading() {
    const context = setup();
    context.publisher.polling = false;
    return context;
  }

  it('reads nothing while nobody is subscribed', async () => {
    const { store, timer } = reading();
    await settle();
    expect(store.reads).toBe(0);
    expect(timer.pending).toBe(false);
  });

  it('reads every ~100 ms while subscribed; the first read only sets the baseline', async () => {
    const { store, timer, changes, at } = reading();
    await store.publish(snapshot(1_000_000, { BTC: 67000, ETH: 3000 }));
    const seen: PriceChange[] = [];
    changes.subscribe(['BTC'], (change) => seen.push(change));
    await settle();
    expect(store.reads).toBe(1);
    expect(seen).toEqual([]);
    expect(changes.current('BTC')).toMatchObject({ price: 67000 });
    expect(timer.delays).toEqual([PRICE_CHANGES_POLL_MS]);

    at(1_000_100);
    await store.publish(snapshot(1_000_100, { BTC: 67050.5, ETH: 3001 }));
    timer.fire();
    await settle();
    expect(seen.map((change) => [change.symbol, change.price, change.timestamp])).toEqual([
      ['BTC', 67050.5, 1_000_100],
    ]);

    timer.fire(); // the same snapshot again: no change
    await settle();
    expect(seen).toHaveLength(1);
    expect(store.reads).toBe(3);
  });

  it('stops reading when the last subscriber leaves, and starts over from a new baseline', async () => {
    const { store, timer, changes, at } = reading();
    await store.publish(snapshot(1_000_000, { BTC: 67000 }));
    const stop = changes.subscribe(['BTC'], () => undefined);
    await settle();
    stop();
    expect(timer.pending).toBe(false);
    expect(changes.current('BTC')).toBeUndefined();

    at(1_000_500);
    await store.publish(snapshot(1_000_500, { BTC: 68000 }));
    const seen: number[] = [];
    changes.subscribe(['BTC'], (change) => seen.push(change.price));
    await settle();
    expect(seen).toEqual([]);
    at(1_000_600);
    await store.publish(snapshot(1_000_600, { BTC: 68001 }));
    timer.fire();
    await settle();
    expect(seen).toEqual([68001]);
  });

  it('keeps reading after the store fails', async () => {
    const { store, timer, changes } = reading();
    store.current = () => {
      store.reads += 1;
      return Promise.reject(new Error('Redis connection lost'));
    };
    changes.subscribe(['BTC'], () => undefined);
    await settle();
    expect(store.reads).toBe(1);
    expect(timer.pending).toBe(true);
    timer.fire();
    await settle();
    expect(store.reads).toBe(2);
  });
});
