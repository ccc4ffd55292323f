import { MemoryThrottlerStorage } from './memory-throttler-storage.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('MemoryThrottlerStorage: a paid route window', () => {
  let storage: MemoryThrottlerStorage;

  beforeEach(() => {
    storage = new MemoryThrottlerStorage();
  });

  afterEach(() => {
    storage.onApplicationShutdown();
  });

  it('counts every request; over the limit it is blocked until the window ends', async () => {
    expect(await storage.countPaidRoute('a', 60_000, 2, true)).toMatchObject({
      totalHits: 1,
      isBlocked: false,
    });
    await storage.countPaidRoute('a', 60_000, 2, false);
    const over = await storage.countPaidRoute('a', 60_000, 2, true);
    expect(over).toMatchObject({ totalHits: 3, isBlocked: true, timeToBlockExpire: 60 });
    // another address, and the free routes' bucket, count on their own
    expect((await storage.countPaidRoute('b', 60_000, 2, true)).totalHits).toBe(1);
    expect((await storage.increment('a', 60_000, 2, 0, 'free')).totalHits).toBe(1);
  });

  it('a sale gives back challenges only, never below zero', async () => {
    await storage.countPaidRoute('a', 60_000, 5, true);
    await storage.countPaidRoute('a', 60_000, 5, false);
    expect((await storage.giveBackChallenge('a', 5)).totalHits).toBe(1);
    // the hit left was no challenge (a refused payment): nothing more to give back
    expect((await storage.giveBackChallenge('a', 5)).totalHits).toBe(1);
    expect((await storage.giveBackChallenge('a', 5)).totalHits).toBe(1);
  });

  it('a sale with no window gives no credit ahead', async () => {
    expect((await storage.giveBackChallenge('a', 1)).totalHits).toBe(0);
    expect((await storage.giveBackChallenge('a', 1)).totalHits).toBe(0);
    expect((await storage.countPaidRoute('a', 60_000, 1, true)).isBlocked).toBe(false);
    expect((await storage.countPaidRoute('a', 60_000, 1, true)).isBlocked).toBe(true);
  });

  it('concurrent sales give back no more than the challenges counted', async () => {
    for (let index = 0; index < 10; index += 1)
      await storage.countPaidRoute('a', 60_000, 100, true);
    await Promise.all([
      ...Array.from({ length: 30 }, () => storage.giveBackChallenge('a', 100)),
      ...Array.from({ length: 5 }, () => storage.countPaidRoute('a', 60_000, 100, false)),
    ]);
    expect((await storage.giveBackChallenge('a', 100)).totalHits).toBe(5);
  });

  it('a sale counted on arrival takes back its own hit, never a challenge, never below zero', async () => {
    await storage.countPaidRoute('a', 60_000, 5, true);
    await storage.countPaidRoute('a', 60_000, 5, false);
    expect((await storage.takeBackPayment('a', 60_000, 5, 0)).totalHits).toBe(1);
    // the hit left is a 402's: only giveBackChallenge may take it
    expect((await storage.takeBackPayment('a', 60_000, 5, 0)).totalHits).toBe(1);
    expect((await storage.takeBackPayment('b', 60_000, 5, 0)).totalHits).toBe(0);
  });

  it('a sale counted in a window that has ended takes nothing back from the next', async () => {
    await storage.countPaidRoute('a', 50, 5, false);
    await sleep(80);
    await storage.countPaidRoute('a', 50, 5, false);
    expect((await storage.takeBackPayment('a', 50, 5, 80)).totalHits).toBe(1);
    expect((await storage.takeBackPayment('a', 50, 5, 0)).totalHits).toBe(0);
  });

  it('a window that ended starts again from zero, its challenges gone with it', async () => {
    await storage.countPaidRoute('a', 50, 1, true);
    await storage.countPaidRoute('a', 50, 1, true);
    await sleep(80);
    expect((await storage.giveBackChallenge('a', 1)).totalHits).toBe(0);
    expect(await storage.countPaidRoute('a', 50, 1, false)).toMatchObject({
      totalHits: 1,
      isBlocked: false,
    });
  });
});
