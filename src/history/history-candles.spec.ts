import { ApiError } from '../common/api-error.js';
import type { PricingSettings } from '../aggregation/pricing.settings.js';
import type { Interval, VenueSeries } from './candle.js';
import { MemoryCandleStore } from './candle-store.js';
import { HistoryCandles, KEEP_AFTER_CLOSE_MS } from './history-candles.service.js';
import { VenueError } from '../markets/venue-error.js';
import { refusesInstrument, type VenueAnswers, type VenueCandles } from './venue-candles.js';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-11-20T00:00:00Z');
const PRICING = { maxDeviation: 0.02, outlierFloor: 0.005, madMultiplier: 5 } as PricingSettings;

/** Venues that answer a flat candle at every start asked, and record each round they are asked. */
class CountingVenues {
  readonly rounds: { from: number; to: number }[] = [];
  failing: string[] = [];
  /** Of `failing`, those that said they do not list the instrument. */
  refusing: string[] = [];

  fetch(
    _symbol: string,
    interval: Interval,
    range: { from: number; to: number },
  ): Promise<VenueAnswers> {
    this.rounds.push(range);
    const step = interval === '1h' ? HOUR : 60_000;
    const series: VenueSeries[] = ['a', 'b']
      .filter((venue) => !this.failing.includes(venue))
      .map((venue) => {
        const candles = [];
        for (let time = range.from; time <= range.to; time += step) {
          candles.push({ time, open: 100, high: 101, low: 99, close: 100, volume: 1 });
        }
        return { venue, quote: 'USD', candles };
      });
    const unreachable = this.failing.filter((venue) => !this.refusing.includes(venue));
    return Promise.resolve({ series, failed: this.failing, unreachable, asked: ['a', 'b'] });
  }
}

function history(venues: CountingVenues, store: MemoryCandleStore): HistoryCandles {
  return new HistoryCandles(venues as unknown as VenueCandles, store, PRICING);
}

const closedRange = { symbol: 'BTC', interval: '1h' as const, from: T0, to: T0 + 23 * HOUR };
const afterwards = T0 + 30 * HOUR;

describe('HistoryCandles', () => {
  it('keeps closed candles: a second identical purchase makes no venue call', async () => {
    const venues = new CountingVenues();
    const store = new MemoryCandleStore();
    const first = await history(venues, store).candles(closedRange, afterwards);
    expect(first.candles).toHaveLength(24);
    expect(venues.rounds).toHaveLength(1);
    // another request after the recent-answer window (a new service over the same store)
    const second = await history(venues, store).candles(closedRange, afterwards);
    expect(second.candles).toEqual(first.candles);
    expect(venues.rounds).toHaveLength(1);
  });

  it('shares one round between concurrent identical requests (the 402 and its paid retry)', async () => {
    const venues = new CountingVenues();
    const service = history(venues, new MemoryCandleStore());
    const [a, b] = await Promise.all([
      service.candles(closedRange, afterwards),
      service.candles(closedRange, afterwards),
    ]);
    expect(a).toBe(b);
    expect(venues.rounds).toHaveLength(1);
  });

  it('asks only for the open candle once the closed ones are kept', async () => {
    const venues = new CountingVenues();
    const store = new MemoryCandleStore();
    const now = T0 + 23 * HOUR + KEEP_AFTER_CLOSE_MS + 10 * HOUR;
    const open = { ...closedRange, from: T0 + 10 * HOUR, to: T0 + 33 * HOUR };
    await history(venues, store).candles(open, now);
    const again = await history(venues, store).candles(open, now);
    expect(venues.rounds).toEqual([
      { from: open.from, to: open.to },
      { from: open.to, to: open.to },
    ]);
    expect(again.candles.map((candle) => candle.closed)).toEqual([
      ...Array<boolean>(23).fill(true),
      false,
    ]);
  });

  it('keeps nothing from a round in which a venue failed', async () => {
    const venues = new CountingVenues();
    venues.failing = ['b'];
    const store = new MemoryCandleStore();
    const degraded = await history(venues, store).candles(closedRange, afterwards);
    expect(degraded.candles[0]?.venues).toEqual(['a']);
    expect(degraded.failed).toEqual(['b']);
    expect(store.size).toBe(0);
    venues.failing = [];
    const whole = await history(venues, store).candles(closedRange, afterwards);
    expect(whole.candles[0]?.venues).toEqual(['a', 'b']);
    expect(venues.rounds).toHaveLength(2);
  });

  it('keeps a round in which a venue said it does not list the instrument', async () => {
    const venues = new CountingVenues();
    venues.failing = ['b'];
    venues.refusing = ['b'];
    const store = new MemoryCandleStore();
    await history(venues, store).candles(closedRange, afterwards);
    await history(venues, store).candles(closedRange, afterwards);
    expect(venues.rounds).toHaveLength(1);
    expect(store.size).toBe(24);
  });

  it('answers with no candles, not a 503, when every venue says it does not list the instrument', async () => {
    const venues = new CountingVenues();
    venues.failing = ['a', 'b'];
    venues.refusing = ['a', 'b'];
    const answer = await history(venues, new MemoryCandleStore()).candles(closedRange, afterwards);
    expect(answer.candles).toEqual([]);
  });

  it('answers 503 when no venue answers, and keeps nothing', async () => {
    const venues = new CountingVenues();
    venues.failing = ['a', 'b'];
    const store = new MemoryCandleStore();
    const refused = history(venues, store).candles(closedRange, afterwards);
    await expect(refused).rejects.toBeInstanceOf(ApiError);
    await expect(refused).rejects.toMatchObject({ status: 503, code: 'price_unavailable' });
    expect(store.size).toBe(0);
  });
});

describe('MemoryCandleStore', () => {
  it('is bounded: the oldest kept are forgotten first', async () => {
    const store = new MemoryCandleStore(3);
    await store.put('BTC', '1h', new Map([0, 1, 2, 3, 4].map((start) => [start, null])));
    expect(store.size).toBe(3);
    expect([...(await store.get('BTC', '1h', [0, 1, 2, 3, 4])).keys()]).toEqual([2, 3, 4]);
  });
});

describe('refusesInstrument', () => {
  it.each([
    [new VenueError('venue_error', 'okx error 51001: Instrument ID does not exist'), true],
    [new VenueError('venue_error', 'Kraken error: EQuery:Unknown asset pair'), true],
    // an error in a 200 body that is no answer about the instrument: the venue was not heard
    [new VenueError('venue_error', 'Kraken error: EGeneral:Too many requests'), false],
    [new VenueError('venue_error', 'bybit error 10006: Too many visits!'), false],
    [new VenueError('venue_error', 'okx error 50001: Service temporarily unavailable'), false],
    [new VenueError('http_status', 'HTTP 400'), true],
    [new VenueError('http_status', 'HTTP 404'), true],
    // Binance's ban and Bybit's over-limit answers
    [new VenueError('http_status', 'HTTP 418'), false],
    [new VenueError('http_status', 'HTTP 403'), false],
    [new VenueError('http_status', 'HTTP 503'), false],
    [new VenueError('rate_limited', 'HTTP 429'), false],
    [new VenueError('timeout', 'no complete response within 1500 ms'), false],
    [new VenueError('invalid_body', 'response is not JSON'), false],
    [new Error('boom'), false],
  ])('%s: %s', (error, refuses) => {
    expect(refusesInstrument(error)).toBe(refuses);
  });
});
