import { describeWithRedis, useRedis } from '../../test/support/redis-suite.js';
import { RedisThrottlerStorage } from './redis-throttler-storage.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeWithRedis('RedisThrottlerStorage: a paid route window', () => {
  const redisServer = useRedis();
  const storage = (): RedisThrottlerStorage => new RedisThrottlerStorage(redisServer.client);

  it('counts every request; over the limit it is blocked until the window ends', async () => {
    expect(await storage().countPaidRoute('count', 60_000, 2, true)).toMatchObject({
      totalHits: 1,
      isBlocked: false,
    });
    await storage().countPaidRoute('count', 60_000, 2, false);
    const over = await storage().countPaidRoute('count', 60_000, 2, true);
    expect(over).toMatchObject({ totalHits: 3, isBlocked: true, timeToBlockExpire: 60 });
    expect((await storage().increment('count', 60_000, 2, 0, 'free')).totalHits).toBe(1);
  });

  it('a sale gives back challenges only, never below zero', async () => {
    await storage().countPaidRoute('give-back', 60_000, 5, true);
    await storage().countPaidRoute('give-back', 60_000, 5, false);
    expect((await storage().giveBackChallenge('give-back', 5)).totalHits).toBe(1);
    expect((await storage().giveBackChallenge('give-back', 5)).totalHits).toBe(1);
    expect((await storage().giveBackChallenge('give-back', 5)).totalHits).toBe(1);
  });

  it('a sale counted on arrival takes back its own hit, never a challenge, creating nothing', async () => {
    await storage().countPaidRoute('take-back', 60_000, 5, true);
    await storage().countPaidRoute('take-back', 60_000, 5, false);
    expect((await storage().takeBackPayment('take-back', 60_000, 5, 0)).totalHits).toBe(1);
    expect((await storage().takeBackPayment('take-back', 60_000, 5, 0)).totalHits).toBe(1);
    expect((await storage().takeBackPayment('none', 60_000, 5, 0)).totalHits).toBe(0);
    expect(await redisServer.client.exists('x402:rate-limit:paid-route:none')).toBe(0);
  });

  it('a sale counted in a window that has ended takes nothing back from the next', async () => {
    await storage().countPaidRoute('next', 200, 5, false);
    await sleep(250);
    await storage().countPaidRoute('next', 200, 5, false);
    expect((await storage().takeBackPayment('next', 200, 5, 250)).totalHits).toBe(1);
    expect((await storage().takeBackPayment('next', 200, 5, 0)).totalHits).toBe(0);
  });

  it('a sale with no window gives no credit ahead and creates nothing', async () => {
    expect((await storage().giveBackChallenge('ahead', 1)).totalHits).toBe(0);
    expect(await redisServer.client.exists('x402:rate-limit:paid-route:ahead')).toBe(0);
    expect((await storage().countPaidRoute('ahead', 60_000, 1, true)).isBlocked).toBe(false);
    expect((await storage().countPaidRoute('ahead', 60_000, 1, true)).isBlocked).toBe(true);
  });

  it('concurrent sales, from any instance, give back no more than the challenges counted', async () => {
    const other = storage();
    for (let index = 0; index < 10; index += 1) {
      await storage().countPaidRoute('concurrent', 60_000, 100, true);
    }
    await Promise.all([
      ...Array.from({ length: 15 }, () => storage().giveBackChallenge('concurrent', 100)),
      ...Array.from({ length: 15 }, () => other.giveBackChallenge('concurrent', 100)),
      ...Array.from({ length: 5 }, () => other.countPaidRoute('concurrent', 60_000, 100, false)),
    ]);
    expect((await storage().giveBackChallenge('concurrent', 100)).totalHits).toBe(5);
  });

  it('a given-back window keeps its end; an ended one starts again from zero', async () => {
    await storage().countPaidRoute('window', 300, 1, true);
    await storage().giveBackChallenge('window', 1);
    await sleep(100);
    // hits back to 0, then counted again: the window still ends 300 ms after its first hit
    expect((await storage().countPaidRoute('window', 300, 1, true)).totalHits).toBe(1);
    expect(await redisServer.client.pTTL('x402:rate-limit:paid-route:window')).toBeLessThanOrEqual(
      200,
    );
    await sleep(250);
    expect((await storage().giveBackChallenge('window', 1)).totalHits).toBe(0);
    expect((await storage().countPaidRoute('window', 300, 1, false)).totalHits).toBe(1);
  });
});
