import { FakeVenue } from '../../test/support/fake-venue.js';
import { ApiError, ErrorCode } from '../common/api-error.js';
import type { MarketsSettings } from '../markets/markets.settings.js';
import { COINBASE_CANDLES, KRAKEN_CANDLES } from './candle-venues.js';
import { VenueCallSlots } from './venue-call-slots.js';
import { VenueCandles } from './venue-candles.js';

const MINUTE = 60_000;
const FROM = Date.parse('2026-11-20T00:00:00Z');

function settings(urls: Record<string, string>, timeoutMs = 2000): MarketsSettings {
  return {
    enabled: Object.keys(urls),
    baseUrls: urls,
    timeoutMs,
    apiKeys: {},
    streams: [],
    streamUrls: {},
    streamQuietMs: 10_000,
  };
}

const slots = (limit = 16): VenueCallSlots => new VenueCallSlots(limit, 2000);

describe('VenueCandles', () => {
  let coinbase: FakeVenue;
  let kraken: FakeVenue;

  beforeAll(async () => {
    coinbase = await FakeVenue.start();
    kraken = await FakeVenue.start();
    coinbase.onPrefix('/api/v3/brokerage/', () => ({
      kind: 'json',
      body: () => ({ candles: [] }),
    }));
  });

  afterAll(async () => {
    await Promise.all([coinbase.close(), kraken.close()]);
  });

  it('splits a range longer than one call allows, at the venue base URL configured', async () => {
    const venues = new VenueCandles(
      settings({ coinbase: coinbase.url }),
      [COINBASE_CANDLES],
      slots(),
    );
    const answers = await venues.fetch('BTC', '1m', { from: FROM, to: FROM + 499 * MINUTE });
    expect(answers).toEqual({
      series: [{ venue: 'coinbase', quote: 'USD', candles: [] }],
      failed: [],
      unreachable: [],
      asked: ['coinbase'],
    });
    const seconds = (ms: number): number => ms / 1000;
    expect(coinbase.requests.slice(-2)).toEqual([
      `/api/v3/brokerage/market/products/BTC-USD/candles?start=${seconds(FROM)}&end=${seconds(FROM + 349 * MINUTE)}&granularity=ONE_MINUTE&limit=350`,
      `/api/v3/brokerage/market/products/BTC-USD/candles?start=${seconds(FROM + 350 * MINUTE)}&end=${seconds(FROM + 499 * MINUTE)}&granularity=ONE_MINUTE&limit=150`,
    ]);
    expect(venues.calls).toBe(2);
  });

  it('answers without a venue that hangs past MARKET_TIMEOUT_MS, counting it unreachable', async () => {
    kraken.onPrefix('/0/public/OHLC', () => ({ kind: 'hang' }));
    const venues = new VenueCandles(
      settings({ coinbase: coinbase.url, kraken: kraken.url }, 300),
      [COINBASE_CANDLES, KRAKEN_CANDLES],
      slots(),
    );
    const started = Date.now();
    const answers = await venues.fetch('BTC', '1h', { from: FROM, to: FROM + 3_600_000 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(answers.series.map((series) => series.venue)).toEqual(['coinbase']);
    expect(answers.unreachable).toEqual(['kraken']);
  });

  it('a round whose calls cannot all start in time is a 503 with Retry-After, the waiting calls never made', async () => {
    kraken.onPrefix('/0/public/OHLC', () => ({ kind: 'hang' }));
    const busy = new VenueCallSlots(1, 100);
    const venues = new VenueCandles(
      settings({ coinbase: coinbase.url, kraken: kraken.url }, 1000),
      [KRAKEN_CANDLES, COINBASE_CANDLES],
      busy,
    );
    const asked = coinbase.requests.length;
    const refused = venues.fetch('BTC', '1h', { from: FROM, to: FROM + 3_600_000 });
    await expect(refused).rejects.toBeInstanceOf(ApiError);
    await expect(refused).rejects.toMatchObject({
      code: ErrorCode.PriceUnavailable,
      headers: { 'retry-after': '1' },
    });
    expect(coinbase.requests.length).toBe(asked);
    expect(venues.calls).toBe(1);
  });

  it('asks only the enabled venues that serve the interval', () => {
    const venues = new VenueCandles(
      settings({ coinbase: coinbase.url, kraken: kraken.url }),
      [COINBASE_CANDLES, KRAKEN_CANDLES],
      slots(),
    );
    expect(venues.serving('4h').map((venue) => venue.id)).toEqual(['kraken']);
    expect(venues.serving('1h').map((venue) => venue.id)).toEqual(['coinbase', 'kraken']);
  });
});
