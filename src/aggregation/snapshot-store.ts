import type { PriceSnapshot } from './price-snapshot.js';

/**
 * Where the refresh publishes snapshots and requests read them. Asynchronous so a shared
 * implementation (Redis) can stand in for the in-memory one when instances share prices.
 */
export interface SnapshotStore {
  current(): Promise<PriceSnapshot | undefined>;
  publish(snapshot: PriceSnapshot): Promise<void>;
}

export const SNAPSHOT_STORE = Symbol('SnapshotStore');

export class InMemorySnapshotStore implements SnapshotStore {
  private snapshot: PriceSnapshot | undefined;

  current(): Promise<PriceSnapshot | undefined> {
    return Promise.resolve(this.snapshot);
  }

  publish(snapshot: PriceSnapshot): Promise<void> {
    this.snapshot = snapshot;
    return Promise.resolve();
  }
}
