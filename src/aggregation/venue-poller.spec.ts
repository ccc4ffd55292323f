import type { PriceSource, RawQuote } from '../markets/price-source.js';
import { earliestExpiry } from './price-refresh.service.js';
import { VenuePoller } from './venue-poller.js';

/** A venue that answers when the test says so, recording each call. */
class ControlledSource implements PriceSource {
  readonly id = 'controlled';
  calls = 0;
  private pending: ((quotes: RawQuote[]) => void)[] = [];

  fetchQuotes(): Promise<RawQuote[]> {
    this.calls += 1;
    return new Promise((resolve) => this.pending.push(resolve));
  }

  answer(quotes: RawQuote[] = []): void {
    for (const resolve of this.pending.splice(0)) resolve(quotes);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('VenuePoller on its own clock', () => {
  it('polls at its own interval and tells the listener after each attempt', async () => {
    const source = new ControlledSource();
    const poller = new VenuePoller(source, 40);
    const told: string[] = [];
    poller.start((_poller, change) => told.push(`${change.before}→${change.after}`));
    try {
      await sleep(5);
      expect(source.calls).toBe(1);
      source.answer();
      await sleep(60);
      expect(source.calls).toBe(2);
      expect(told).toEqual(['waiting→ok']);
    } finally {
      poller.stop();
      source.answer();
    }
  });

  it('never starts a second request while one is in flight, and refresh joins it', async () => {
    const source = new ControlledSource();
    const poller = new VenuePoller(source, 10);
    poller.start(() => undefined);
    try {
      await sleep(50);
      expect(source.calls).toBe(1);
      const joined = poller.pollIfDue();
      expect(source.calls).toBe(1);
      source.answer();
      await joined;
      expect(poller.snapshot().status).toBe('ok');
    } finally {
      poller.stop();
      source.answer();
    }
  });

  it('stops polling once stopped', async () => {
    const source = new ControlledSource();
    const poller = new VenuePoller(source, 10);
    poller.start(() => undefined);
    await sleep(5);
    source.answer();
    poller.stop();
    await sleep(50);
    expect(source.calls).toBe(1);
  });
});

describe('earliestExpiry', () => {
  const at = (...moments: number[]) => moments.map((observedAt) => ({ observedAt }));

  it('is the first moment after now at which an observation passes the stale limit', () => {
    expect(earliestExpiry(at(1000, 1500, 200), 2000, 1000)).toBe(2001);
    expect(earliestExpiry(at(1500, 1800), 2000, 1000)).toBe(2501);
  });

  it('ignores observations already stale, and has none for an empty pool', () => {
    expect(earliestExpiry(at(100), 2000, 1000)).toBeUndefined();
    expect(earliestExpiry([], 2000, 1000)).toBeUndefined();
  });

  it('counts an observation from the future as made now', () => {
    expect(earliestExpiry(at(9000), 2000, 1000)).toBe(3001);
  });

  it('also ends a push oracle quote at the end of its heartbeat', () => {
    const rule = { heartbeatMs: 5000, deviation: 0.01 };
    expect(earliestExpiry([{ observedAt: 0, updateRule: rule }], 2000, 1000)).toBe(5001);
    expect(earliestExpiry([{ observedAt: 1500, updateRule: rule }], 2000, 1000)).toBe(2501);
  });
});
