import { setTimeout as sleep } from 'node:timers/promises';
import { ScopedStorage } from './scoped-storage.js';

describe('ScopedStorage', () => {
  it('gives its store to the operation, across awaits and timers, and to nothing outside', async () => {
    const storage = new ScopedStorage<{ id: number }>();
    const seen: (number | undefined)[] = [];
    const result = await storage.run({ id: 1 }, async () => {
      seen.push(storage.getStore()?.id);
      await sleep(1);
      seen.push(storage.getStore()?.id);
      await new Promise<void>((resolve) => {
        setImmediate(() => {
          seen.push(storage.getStore()?.id);
          resolve();
        });
      });
      return 'done';
    });
    expect(result).toBe('done');
    expect(seen).toEqual([1, 1, 1]);
    expect(storage.getStore()).toBeUndefined();
  });

  it('keeps each overlapping run its own store until the last one ends', async () => {
    const storage = new ScopedStorage<string>();
    let releaseLong!: () => void;
    const long = storage.run('long', async () => {
      await new Promise<void>((resolve) => {
        releaseLong = resolve;
      });
      await sleep(1);
      return storage.getStore();
    });
    const short = await storage.run('short', async () => {
      await sleep(1);
      return storage.getStore();
    });
    // the short run ended while the long one is in flight: the long one still has its store
    releaseLong();
    expect(short).toBe('short');
    expect(await long).toBe('long');
    expect(storage.getStore()).toBeUndefined();
  });

  it('ends a run that failed like one that succeeded', async () => {
    const storage = new ScopedStorage<string>();
    await expect(
      storage.run('failing', async () => {
        await sleep(1);
        throw new Error(`failed in ${storage.getStore() ?? 'nothing'}`);
      }),
    ).rejects.toThrow('failed in failing');
    expect(storage.getStore()).toBeUndefined();
    // and can run again
    expect(await storage.run('again', () => Promise.resolve(storage.getStore()))).toBe('again');
  });
});
