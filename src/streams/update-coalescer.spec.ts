import { jest } from '@jest/globals';
import type { PriceChange } from '../aggregation/price-changes.js';
import { UpdateCoalescer } from './update-coalescer.js';

const START = 1_700_000_000_000;

function change(symbol: string, price: number): PriceChange {
  const timestamp = Date.now();
  return { symbol, price, timestamp, venues: 3, spread: 0.0002, oldestInputAt: timestamp - 50 };
}

/** The coalescer on the fake clock. */
function coalescer(minMoveBps: number, maxHz: number): UpdateCoalescer {
  return new UpdateCoalescer({ minMoveBps, maxHz }, () => Date.now());
}

/** Whether `promise` has settled after pending callbacks run, and with what. */
async function peek<T>(promise: Promise<T>): Promise<{ settled: boolean; value?: T }> {
  let result: { settled: boolean; value?: T } = { settled: false };
  void promise.then((value) => {
    result = { settled: true, value };
  });
  await jest.advanceTimersByTimeAsync(0);
  return result;
}

/** next(), letting the fake clock run until it resolves. */
async function take(updates: UpdateCoalescer): Promise<PriceChange | undefined> {
  const next = updates.next();
  for (let i = 0; i < 100 && !(await peek(next)).settled; i += 1) {
    await jest.advanceTimersByTimeAsync(100);
  }
  return next;
}

/** A writer that takes every change as soon as it is due, confirming it; records [ms, symbol, price]. */
function drain(updates: UpdateCoalescer): { log: [number, string, number][]; done: Promise<void> } {
  const log: [number, string, number][] = [];
  const done = (async () => {
    for (;;) {
      const next = await updates.next();
      if (next === undefined) return;
      log.push([Date.now() - START, next.symbol, next.price]);
      updates.sent(next);
    }
  })();
  return { log, done };
}

beforeEach(() => {
  jest.useFakeTimers({ now: START });
});

afterEach(() => {
  jest.useRealTimers();
});

describe('UpdateCoalescer', () => {
  it('hands out a first change at once and waits while none is due', async () => {
    const updates = coalescer(0, 1);
    updates.offer(change('BTC', 100));
    await expect(updates.next()).resolves.toMatchObject({ symbol: 'BTC', price: 100 });
    const waiting = updates.next();
    expect((await peek(waiting)).settled).toBe(false);
    updates.close();
    await expect(waiting).resolves.toBeUndefined();
  });

  it('resolves a waiting next() as soon as a change arrives', async () => {
    const updates = coalescer(0, 10);
    const waiting = updates.next();
    await jest.advanceTimersByTimeAsync(500);
    updates.offer(change('ETH', 3000));
    expect(await peek(waiting)).toEqual({ settled: true, value: change('ETH', 3000) });
  });

  it('coalesces a burst per symbol, newest wins, never more pending than symbols', async () => {
    const updates = coalescer(0, 1);
    for (let i = 1; i <= 1000; i += 1) {
      updates.offer(change('BTC', 100 + i));
      updates.offer(change('ETH', 10 + i));
      expect(updates.size).toBeLessThanOrEqual(2);
    }
    expect(updates.size).toBe(2);
    const first = await updates.next();
    const second = await updates.next();
    expect([first?.symbol, first?.price, second?.symbol, second?.price]).toEqual([
      'BTC',
      1100,
      'ETH',
      1010,
    ]);
    expect(updates.size).toBe(0);
  });

  it('gives a slow reader only the newest price of each symbol when it comes back', async () => {
    const updates = coalescer(0, 10);
    updates.offer(change('BTC', 100));
    const first = await updates.next();
    // the writer is busy for 3 s while 30 changes arrive
    for (let i = 1; i <= 30; i += 1) {
      await jest.advanceTimersByTimeAsync(100);
      updates.offer(change('BTC', 100 + i));
    }
    updates.sent(first!);
    await expect(updates.next()).resolves.toMatchObject({ price: 130 });
    expect(updates.size).toBe(0);
    expect((await peek(updates.next())).settled).toBe(false);
  });

  it('spaces one symbol’s sends at least 1 / maxHz apart, holding back the newest', async () => {
    const updates = coalescer(0, 2);
    const { log } = drain(updates);
    for (let ms = 0; ms < 2000; ms += 100) {
      updates.offer(change('BTC', 100 + ms / 100));
      await jest.advanceTimersByTimeAsync(100);
    }
    await jest.advanceTimersByTimeAsync(1000);
    // 2 Hz: at 0, 500, 1000, 1500 and 2000 ms, each time the newest price offered before
    expect(log).toEqual([
      [0, 'BTC', 100],
      [500, 'BTC', 104],
      [1000, 'BTC', 109],
      [1500, 'BTC', 114],
      [2000, 'BTC', 119],
    ]);
    updates.close();
  });

  it('limits each symbol on its own clock', async () => {
    const updates = coalescer(0, 1);
    const { log } = drain(updates);
    updates.offer(change('BTC', 100));
    await jest.advanceTimersByTimeAsync(300);
    updates.offer(change('ETH', 10));
    updates.offer(change('BTC', 101));
    await jest.advanceTimersByTimeAsync(300);
    updates.offer(change('ETH', 11));
    await jest.advanceTimersByTimeAsync(2000);
    expect(log).toEqual([
      [0, 'BTC', 100],
      [300, 'ETH', 10],
      [1000, 'BTC', 101],
      [1300, 'ETH', 11],
    ]);
    updates.close();
  });

  it('sends a move of exactly minMoveBps since the last sent price, not one just below', async () => {
    const updates = coalescer(10, 10);
    updates.offer(change('BTC', 60000));
    updates.sent((await updates.next())!);
    updates.offer(change('BTC', 60059.99)); // 9.998 bps
    expect(updates.size).toBe(0);
    updates.offer(change('BTC', 60060)); // exactly 10 bps
    const boundary = await take(updates);
    expect(boundary?.price).toBe(60060);
    updates.sent(boundary!);
    updates.offer(change('BTC', 59999.95)); // 9.998 bps down from 60060
    expect(updates.size).toBe(0);
    updates.offer(change('BTC', 59999.94)); // exactly 10 bps down
    expect(updates.size).toBe(1);
  });

  it('measures minMoveBps from the last price the writer confirmed, not from offers', async () => {
    const updates = coalescer(50, 10);
    updates.offer(change('BTC', 100));
    const first = await updates.next();
    updates.sent(first!);
    // many small steps: each under 50 bps from the one before, the sum over it
    for (let price = 100.1; price < 100.65; price += 0.1) updates.offer(change('BTC', price));
    expect((await take(updates))?.price).toBeCloseTo(100.6, 6);
  });

  it('drops a pending move when the newest price is back near the last sent one', async () => {
    const updates = coalescer(10, 10);
    updates.offer(change('BTC', 100));
    updates.sent((await updates.next())!);
    updates.offer(change('BTC', 101));
    expect(updates.size).toBe(1);
    updates.offer(change('BTC', 100.05));
    expect(updates.size).toBe(0);
    expect((await peek(updates.next())).settled).toBe(false);
    updates.close();
  });

  it('re-checks a pending move against a price confirmed after it was offered', async () => {
    const updates = coalescer(10, 1);
    updates.offer(change('BTC', 100));
    const first = await updates.next();
    updates.offer(change('BTC', 100.5));
    updates.sent({ ...first!, price: 100.5 });
    const waiting = updates.next();
    await jest.advanceTimersByTimeAsync(2000);
    expect((await peek(waiting)).settled).toBe(false);
    updates.close();
    await expect(waiting).resolves.toBeUndefined();
  });

  it('takes nothing after close() and answers next() with undefined', async () => {
    const updates = coalescer(0, 1);
    updates.offer(change('BTC', 100));
    updates.close();
    updates.offer(change('BTC', 101));
    expect(updates.size).toBe(0);
    await expect(updates.next()).resolves.toBeUndefined();
  });

  it('clears its timer on close() so nothing keeps running', async () => {
    const updates = coalescer(0, 0.1);
    updates.offer(change('BTC', 100));
    await updates.next();
    updates.offer(change('BTC', 101));
    const waiting = updates.next();
    expect(jest.getTimerCount()).toBe(1);
    updates.close();
    expect(jest.getTimerCount()).toBe(0);
    await expect(waiting).resolves.toBeUndefined();
  });

  it('refuses a second concurrent next() and options out of range', () => {
    const updates = coalescer(0, 1);
    void updates.next();
    expect(() => updates.next()).toThrow('one writer only');
    updates.close();
    expect(() => coalescer(-1, 1)).toThrow(RangeError);
    expect(() => coalescer(0, 0)).toThrow(RangeError);
    expect(() => coalescer(Number.NaN, 1)).toThrow(RangeError);
  });

  it('hands a held-back change over to a newer one of its symbol, taking it (newest())', async () => {
    const updates = coalescer(0, 1000);
    updates.offer(change('BTC', 100));
    const held = await updates.next();
    expect(held).toEqual(change('BTC', 100));
    // no newer change: the held one goes out
    expect(updates.newest(held!)).toBe(held);
    updates.offer(change('ETH', 7));
    updates.offer(change('BTC', 101));
    updates.offer(change('BTC', 102));
    expect(updates.newest(held!)).toEqual(change('BTC', 102));
    expect(updates.size).toBe(1);
    expect(await updates.next()).toEqual(change('ETH', 7));
    updates.close();
  });
});
