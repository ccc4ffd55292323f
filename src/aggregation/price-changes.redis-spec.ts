import KeyvRedis, { Keyv } from '@keyv/redis';
import { createCache } from 'cache-manager';
import { describeWithRedis, useRedis } from '../../test/support/redis-suite.js';
import { BackgroundTimeout } from '../common/timeout-slot.js';
import type { AggregatedPrice } from './aggregate.js';
import { SnapshotPriceChanges, type PriceChange } from './price-changes.js';
import type { PriceSnapshot } from './price-snapshot.js';
import { CacheSnapshotStore } from './shared-snapshot-store.js';

const STALE_MS = 60_000;

function snapshot(asOf: number, btc: number): PriceSnapshot {
  const price: AggregatedPrice = {
    symbol: 'BTC',
    price: btc,
    sources: ['coinbase', 'kraken'],
    observedAt: asOf,
    oldestInputAt: asOf - 100,
    spread: 0.0001,
  };
  return { asOf, prices: new Map([['BTC', price]]) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeWithRedis(
  'SnapshotPriceChanges on an instance reading the shared snapshot in Redis',
  () => {
    const shared = useRedis();

    it('delivers the changes another instance publishes, within a few reads', async () => {
      const store = () =>
        new CacheSnapshotStore(
          createCache({ stores: [new Keyv({ store: new KeyvRedis(shared.client) })] }),
          STALE_MS,
          () => shared.client.isReady,
        );
      const poller = store();
      const reader = new SnapshotPriceChanges(
        { polling: false, onPublished: () => () => undefined },
        store(),
        STALE_MS,
        new BackgroundTimeout(),
      );
      const now = Date.now();
      await poller.publish(snapshot(now, 67_000));
      const seen: PriceChange[] = [];
      const stop = reader.subscribe(['BTC'], (change) => seen.push(change));
      try {
        // the first read sets the baseline
        for (let i = 0; i < 50 && reader.current('BTC') === undefined; i += 1) await sleep(20);
        expect(reader.current('BTC')).toMatchObject({ price: 67_000, timestamp: now });
        expect(seen).toEqual([]);

        await poller.publish(snapshot(now + 100, 67_012.345));
        for (let i = 0; i < 50 && seen.length === 0; i += 1) await sleep(20);
        expect(seen).toEqual([
          {
            symbol: 'BTC',
            price: 67_012.35,
            timestamp: now + 100,
            venues: 2,
            spread: 0.0001,
            oldestInputAt: now,
          },
        ]);
      } finally {
        stop();
      }
    });
  },
);
