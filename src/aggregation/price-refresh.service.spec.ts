import { SchedulerRegistry } from '@nestjs/schedule';
import { AssetCatalogue } from '../assets/asset-catalogue.js';
import { loadConfig } from '../app-config.js';
import type { PriceSource, RawQuote } from '../markets/price-source.js';
import { VenueError } from '../markets/venue-error.js';
import type { PollingElection } from './polling-election.js';
import { PriceRefreshService, earliestExpiry } from './price-refresh.service.js';
import { InMemorySnapshotStore } from './snapshot-store.js';
import type { SourceReport, SourceReportStore } from './source-report.js';

const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

/** A venue quoting fixed USD prices, dated when asked, or failing with `error`. */
class FixedSource implements PriceSource {
  calls = 0;
  error: Error | undefined;

  constructor(
    readonly id: string,
    private readonly prices: Readonly<Record<string, number>>,
    readonly minIntervalMs?: number,
  ) {}

  fetchQuotes(): Promise<RawQuote[]> {
    this.calls += 1;
    if (this.error !== undefined) return Promise.reject(this.error);
    const observedAt = Date.now();
    return Promise.resolve(
      Object.entries(this.prices).map(([symbol, price]) => ({
        source: this.id,
        symbol,
        quote: 'USD' as const,
        price,
        observedAt,
      })),
    );
  }
}

/** A shared report store that keeps what is published, in order. */
class RecordingReportStore implements SourceReportStore {
  readonly published: SourceReport[] = [];

  current(): Promise<SourceReport | undefined> {
    return Promise.resolve(this.published.at(-1));
  }

  publish(report: SourceReport): Promise<void> {
    this.published.push(report);
    return Promise.resolve();
  }
}

/** An election this instance wins at once (`leads`) or never. */
function election(instance: string, leads: boolean): PollingElection {
  return {
    instance,
    start: (lead) => {
      if (leads) lead();
    },
    stop: () => Promise.resolve(),
  };
}

interface Sharing {
  readonly election: PollingElection;
  readonly reports: SourceReportStore;
}

function service(
  sources: PriceSource[],
  variables: Record<string, string> = {},
  sharing?: Sharing,
) {
  const config = loadConfig({ X402_PAY_TO: PAY_TO, ...variables });
  const store = new InMemorySnapshotStore();
  const scheduler = new SchedulerRegistry();
  const refresh = new PriceRefreshService(
    sources,
    store,
    config.pricing,
    config.markets,
    new AssetCatalogue(config.assets),
    sharing?.election ?? null,
    scheduler,
    sharing?.reports ?? null,
  );
  return { refresh, store, scheduler };
}

/** Resolves once `condition` holds; the test's own time-out bounds the wait. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('PriceRefreshService', () => {
  const venues = () => [
    new FixedSource('a', { BTC: 100, ETH: 10 }),
    new FixedSource('b', { BTC: 101, ETH: 10 }),
    new FixedSource('c', { BTC: 102 }),
  ];

  it('has no round and publishes nothing before the first refresh', async () => {
    const { refresh, store } = service(venues());
    expect(refresh.lastRound()).toBeUndefined();
    expect(await store.current()).toBeUndefined();
  });

  it('refresh() polls every venue once, aggregates their quotes and publishes the snapshot', async () => {
    const sources = venues();
    const { refresh, store } = service(sources);
    const before = Date.now();
    const snapshot = await refresh.refresh();

    expect(sources.map((source) => source.calls)).toEqual([1, 1, 1]);
    expect(await store.current()).toBe(snapshot);
    expect(snapshot.asOf).toBeGreaterThanOrEqual(before);
    expect(snapshot.prices.get('BTC')).toMatchObject({ price: 101, sources: ['a', 'b', 'c'] });
    expect(snapshot.prices.get('ETH')).toMatchObject({ price: 10, sources: ['a', 'b'] });

    const round = refresh.lastRound();
    expect(round?.asOf).toBe(snapshot.asOf);
    expect(round?.venues.map((venue) => [venue.id, venue.status, venue.instruments])).toEqual([
      ['a', 'ok', 2],
      ['b', 'ok', 2],
      ['c', 'ok', 1],
    ]);
  });

  it('tells onPublished listeners each snapshot once it is in the store, until they unsubscribe', async () => {
    const { refresh, store } = service(venues());
    const seen: unknown[] = [];
    const stop = refresh.onPublished((snapshot) => {
      seen.push(snapshot);
      void store.current().then((stored) => seen.push(stored === snapshot));
    });
    const first = await refresh.refresh();
    stop();
    await refresh.refresh();
    expect(seen).toEqual([first, true]);
  });

  it('prices from the venues that answer when one fails, and reports the failing one', async () => {
    const sources = venues();
    sources[1]!.error = new VenueError('rate_limited', 'HTTP 429', 10_000);
    const { refresh } = service(sources);
    const snapshot = await refresh.refresh();

    expect(snapshot.prices.get('BTC')).toMatchObject({ sources: ['a', 'c'] });
    // ETH has only one venue left, below the default quorum of two
    expect(snapshot.prices.has('ETH')).toBe(false);
    expect(refresh.lastRound()?.result.outcomes.get('ETH')).toMatchObject({
      status: 'unpriced',
      reason: 'below_quorum',
    });
    expect(refresh.lastRound()?.venues[1]).toMatchObject({
      id: 'b',
      status: 'rate_limited',
      consecutiveFailures: 1,
      lastError: { kind: 'rate_limited', message: 'HTTP 429' },
    });
  });

  it('paces each venue at its own minimum interval, never faster than PRICE_REFRESH_MS', async () => {
    const slow = new FixedSource('slow', { BTC: 100 }, 60_000);
    const fast = new FixedSource('fast', { BTC: 100 }, 10);
    const { refresh } = service([slow, fast], { PRICE_REFRESH_MS: '5000' });
    await refresh.refresh();
    await refresh.refresh();

    expect([slow.calls, fast.calls]).toEqual([1, 1]);
    const paces = refresh
      .lastRound()
      ?.venues.map((venue) => venue.nextPollAt - (venue.lastAttemptAt ?? Number.NaN));
    expect(paces).toEqual([60_000, 5000]);
  });

  it('aggregates the last good quotes of venues that now fail, while those quotes are fresh', async () => {
    const sources = venues();
    const { refresh } = service(sources, { PRICE_REFRESH_MS: '250' });
    const first = await refresh.refresh();
    for (const source of sources) source.error = new VenueError('timeout', 'no answer');
    const due = Math.max(...(refresh.lastRound()?.venues.map((venue) => venue.nextPollAt) ?? []));
    await until(() => Promise.resolve(Date.now() >= due));
    const second = await refresh.refresh();

    expect(sources.map((source) => source.calls)).toEqual([2, 2, 2]);
    expect(refresh.lastRound()?.venues.map((venue) => venue.status)).toEqual([
      'failing',
      'failing',
      'failing',
    ]);
    expect(second.asOf).toBeGreaterThan(first.asOf);
    expect(refresh.lastRound()?.result.outcomes.get('BTC')).toMatchObject({
      status: 'priced',
      price: first.prices.get('BTC'),
    });
  });

  it('polls each venue again on its own clock once bootstrapped, and stops at shutdown', async () => {
    const sources = venues();
    const { refresh, store, scheduler } = service(sources, { PRICE_REFRESH_MS: '250' });
    refresh.onApplicationBootstrap();
    try {
      await until(async () => (await store.current())?.prices.has('BTC') === true);
      await until(() => Promise.resolve(sources.every((source) => source.calls >= 2)));
      expect(refresh.lastRound()?.venues.every((venue) => venue.status === 'ok')).toBe(true);
      // every venue waits for its next poll on a timeout the scheduler lists
      await until(() => Promise.resolve(scheduler.getTimeouts().length >= 3));
      expect(scheduler.getTimeouts()).toEqual(
        expect.arrayContaining(['venue-poll:a', 'venue-poll:b', 'venue-poll:c']),
      );
    } finally {
      await refresh.onApplicationShutdown();
    }
    expect(scheduler.getTimeouts()).toEqual([]);
    const calls = sources.map((source) => source.calls);
    // two more intervals: a poller still running would have asked again
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(sources.map((source) => source.calls)).toEqual(calls);
  });
});

describe('PriceRefreshService.sourceReport', () => {
  const venues = () => [new FixedSource('a', { BTC: 100 }), new FixedSource('b', { BTC: 101 })];

  it('reports every venue before any round: waiting, no error, nothing aggregated', async () => {
    const { refresh } = service(venues());
    const report = await refresh.sourceReport();
    expect(report).toMatchObject({ aggregatedAt: null, rates: { USDT: null, USDC: null } });
    expect(report.instance).toMatch(/^.+:\d+$/);
    expect(
      report.sources.map(({ id, status, lastError, nextPollAt }) => ({
        id,
        status,
        lastError,
        nextPollAt,
      })),
    ).toEqual([
      { id: 'a', status: 'waiting', lastError: null, nextPollAt: null },
      { id: 'b', status: 'waiting', lastError: null, nextPollAt: null },
    ]);
  });

  it('names each failing venue with its error while no venue has answered', async () => {
    const sources = venues();
    sources[0]!.error = new VenueError('http_status', 'HTTP 503');
    sources[1]!.error = new VenueError('timeout', 'no answer within 1000 ms');
    const { refresh, store } = service(sources);
    refresh.onApplicationBootstrap();
    try {
      await until(() => Promise.resolve(sources.every((source) => source.calls >= 1)));
      await until(async () =>
        (await refresh.sourceReport()).sources.every((source) => source.lastError !== null),
      );
      const report = await refresh.sourceReport();
      expect(report.aggregatedAt).toBeNull();
      expect(report.sources).toMatchObject([
        { id: 'a', status: 'failing', lastError: { kind: 'http_status', message: 'HTTP 503' } },
        { id: 'b', status: 'failing', lastError: { kind: 'timeout' } },
      ]);
      expect(await store.current()).toBeUndefined();
    } finally {
      await refresh.onApplicationShutdown();
    }
  });

  it('the polling instance publishes its report at once and then every second', async () => {
    const reports = new RecordingReportStore();
    const { refresh, scheduler } = service(
      venues(),
      {},
      {
        election: election('poller-1', true),
        reports,
      },
    );
    refresh.onApplicationBootstrap();
    try {
      await until(() => Promise.resolve(reports.published.length >= 2));
      expect(reports.published[0]).toMatchObject({ instance: 'poller-1' });
      expect(reports.published[1]!.sources.map((source) => source.id)).toEqual(['a', 'b']);
      expect(scheduler.getTimeouts()).toContain('source-report');
      expect(refresh.polling).toBe(true);
    } finally {
      await refresh.onApplicationShutdown();
    }
    expect(scheduler.getTimeouts()).not.toContain('source-report');
  });

  it("an instance that does not poll serves the poller's report, and names none before one is published", async () => {
    const reports = new RecordingReportStore();
    const sources = venues();
    const { refresh } = service(sources, {}, { election: election('follower', false), reports });
    refresh.onApplicationBootstrap();
    try {
      const before = await refresh.sourceReport();
      expect(before.instance).toBeNull();
      expect(before.sources.map((source) => source.status)).toEqual(['waiting', 'waiting']);

      const published: SourceReport = { ...before, instance: 'poller-1', aggregatedAt: 'x' };
      await reports.publish(published);
      expect(await refresh.sourceReport()).toEqual(published);
      expect(refresh.polling).toBe(false);
      expect(sources.map((source) => source.calls)).toEqual([0, 0]);
      expect(reports.published).toHaveLength(1);
    } finally {
      await refresh.onApplicationShutdown();
    }
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
