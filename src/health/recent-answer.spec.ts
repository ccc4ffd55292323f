import { jest } from '@jest/globals';
import { RecentAnswer } from './recent-answer.js';

describe('RecentAnswer', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('asks once for every asker within its time, and again after it', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    let asked = 0;
    const recent = new RecentAnswer(1000, () => Promise.resolve((asked += 1)));
    expect(await Promise.all([recent.get(), recent.get(), recent.get()])).toEqual([1, 1, 1]);
    jest.setSystemTime(Date.now() + 999);
    expect(await recent.get()).toBe(1);
    jest.setSystemTime(Date.now() + 1);
    expect(await recent.get()).toBe(2);
    expect(asked).toBe(2);
  });
});
