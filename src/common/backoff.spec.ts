import { backoffDelay } from './backoff.js';

describe('backoffDelay', () => {
  const backoff = { baseMs: 100, maxMs: 2000 };

  it('doubles from the base with every attempt, up to the cap', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((attempt) => backoffDelay(attempt, backoff))).toEqual([
      100, 200, 400, 800, 1600, 2000, 2000,
    ]);
  });

  it('stays at the cap however many attempts failed', () => {
    expect(backoffDelay(5000, backoff)).toBe(2000);
  });

  it('takes up to the jitter fraction off at random', () => {
    const jittered = { ...backoff, jitter: 0.5 };
    expect(backoffDelay(2, jittered, () => 0)).toBe(400);
    expect(backoffDelay(2, jittered, () => 0.5)).toBe(300);
    expect(backoffDelay(9, jittered, () => 1)).toBe(1000);
  });
});
