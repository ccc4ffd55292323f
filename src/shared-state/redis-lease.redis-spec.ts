import { BackgroundTimeout } from '../common/timeout-slot.js';
import { describeWithRedis, useRedis } from '../../test/support/redis-suite.js';
import { RedisLease } from './redis-lease.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeWithRedis('RedisLease', () => {
  const shared = useRedis();

  const lease = (key: string, ttlMs = 200) =>
    new RedisLease(shared.client, {
      key,
      ttlMs,
      renewEveryMs: ttlMs / 4,
      timer: new BackgroundTimeout(),
    });

  it('is held by one holder at a time; release hands it over at once', async () => {
    // nothing here waits for expiry: a long TTL keeps a stalled test machine from expiring it
    const first = lease('lease:one', 10_000);
    const second = lease('lease:one', 10_000);
    expect(await first.hold()).toBe(true);
    expect(await first.hold()).toBe(true);
    expect(await second.hold()).toBe(false);
    expect(await second.holderNow()).toBe(first.holder);
    await first.release();
    expect(await second.hold()).toBe(true);
    await second.release();
    expect(await shared.client.exists('lease:one')).toBe(0);
  });

  it('kept, outlives its TTL; abandoned, expires after it', async () => {
    const kept = lease('lease:kept');
    expect(await kept.hold()).toBe(true);
    kept.keep({});
    await sleep(500);
    expect(await shared.client.get('lease:kept')).toBe(kept.holder);
    await kept.abandon();
    expect(await shared.client.get('lease:kept')).toBe(kept.holder);
    await sleep(300);
    expect(await shared.client.exists('lease:kept')).toBe(0);
  });

  it('tells a kept lease once when another holder has the key, and again when it is back', async () => {
    const kept = lease('lease:taken');
    expect(await kept.hold()).toBe(true);
    const told: string[] = [];
    kept.keep({ held: () => told.push('held'), lost: () => told.push('lost') });
    await shared.client.set('lease:taken', 'another holder', {
      expiration: { type: 'PX', value: 200 },
    });
    await sleep(150);
    expect(told).toEqual(['lost']);
    await sleep(250);
    expect(told).toEqual(['lost', 'held']);
    expect(await shared.client.get('lease:taken')).toBe(kept.holder);
    await kept.release();
  });

  it('takes a free key at once when kept without holding it', async () => {
    const kept = lease('lease:free');
    const told: string[] = [];
    kept.keep({ held: () => told.push('held'), lost: () => told.push('lost') });
    await sleep(20);
    expect(told).toEqual(['held']);
    await kept.release();
    expect(await shared.client.exists('lease:free')).toBe(0);
  });
});
