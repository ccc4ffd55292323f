import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { VenueError } from '../markets/venue-error.js';
import { StatsPoller, type StatsReading } from './stats-poller.js';
import type { MarketStats, StatsFetcher } from './venue-stats.js';

const BTC: MarketStats = { symbol: 'BTC', quote: 'USD', last: 100, observedAt: 0 };

/** Answers each read with the next of `answers` (an error is thrown), counting reads. */
class ScriptedFetcher implements StatsFetcher {
  reads = 0;
  constructor(private readonly answers: (MarketStats[] | Error)[]) {}
  fetchStats(): Promise<MarketStats[]> {
    const answer = this.answers[Math.min(this.reads, this.answers.length - 1)];
    this.reads += 1;
    return answer instanceof Error || answer === undefined
      ? Promise.reject(answer ?? new Error('no answer'))
      : Promise.resolve(answer);
  }
}

/** Lets pending promise callbacks run. */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 5; turn += 1) await Promise.resolve();
}

describe('StatsPoller', () => {
  beforeAll(() => {
    // its failures are logged, as they should be; not into the test output
    Logger.overrideLogger(false);
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  it('reads at start and every interval, telling its listener each good reading', async () => {
    jest.useFakeTimers({ now: 1_000 });
    const fetcher = new ScriptedFetcher([[BTC]]);
    const told: StatsReading[] = [];
    const poller = new StatsPoller('a', fetcher, 30_000, (reading) => told.push(reading));
    poller.start();
    await settle();
    expect(fetcher.reads).toBe(1);
    expect(poller.latest?.bySymbol.get('BTC')).toEqual([BTC]);
    jest.advanceTimersByTime(29_999);
    await settle();
    expect(fetcher.reads).toBe(1);
    jest.advanceTimersByTime(1);
    await settle();
    expect(fetcher.reads).toBe(2);
    expect(told).toHaveLength(2);
    poller.stop();
  });

  it('keeps its last good reading through failures and backs off, honouring Retry-After', async () => {
    jest.useFakeTimers({ now: 1_000 });
    const limited = new VenueError('rate_limited', 'HTTP 429', 120_000);
    const fetcher = new ScriptedFetcher([[BTC], new Error('boom'), limited, [BTC]]);
    const poller = new StatsPoller('a', fetcher, 10_000);
    poller.start();
    await settle();
    const first = poller.latest;
    jest.advanceTimersByTime(10_000); // fails: next after 10 s (2^0)
    await settle();
    expect(fetcher.reads).toBe(2);
    expect(poller.latest).toBe(first);
    jest.advanceTimersByTime(10_000); // rate limited: next after 120 s, not 20 s
    await settle();
    expect(fetcher.reads).toBe(3);
    jest.advanceTimersByTime(119_999);
    await settle();
    expect(fetcher.reads).toBe(3);
    jest.advanceTimersByTime(1);
    await settle();
    expect(fetcher.reads).toBe(4);
    poller.stop();
  });

  it('never reads twice at once: a second poll joins the read in flight', async () => {
    let release: (stats: MarketStats[]) => void = () => undefined;
    let reads = 0;
    const fetcher: StatsFetcher = {
      fetchStats: () => {
        reads += 1;
        return new Promise((resolve) => (release = resolve));
      },
    };
    const poller = new StatsPoller('a', fetcher, 10_000);
    const first = poller.poll();
    const second = poller.poll();
    release([BTC]);
    await Promise.all([first, second]);
    expect(reads).toBe(1);
  });

  it('reads nothing while inactive (another instance polls), and starts once active', async () => {
    jest.useFakeTimers({ now: 1_000 });
    let active = false;
    const fetcher = new ScriptedFetcher([[BTC]]);
    const poller = new StatsPoller('a', fetcher, 30_000, undefined, () => active);
    poller.start();
    jest.advanceTimersByTime(5_000);
    await settle();
    expect(fetcher.reads).toBe(0);
    active = true;
    jest.advanceTimersByTime(1_000);
    await settle();
    expect(fetcher.reads).toBe(1);
    poller.stop();
    jest.advanceTimersByTime(60_000);
    await settle();
    expect(fetcher.reads).toBe(1);
  });
});
