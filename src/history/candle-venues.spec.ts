import { readFileSync } from 'node:fs';
import path from 'node:path';
import { recordedCandles } from '../../test/support/fake-candles.js';
import { projectRoot } from '../../test/support/project-root.js';
import { VenueError } from '../markets/venue-error.js';
import { CANDLE_VENUES } from './candle-venues.js';
import { MAX_CANDLES } from './history-request.js';
import { MAX_CALLS_PER_VENUE, VenueCandles } from './venue-candles.js';
import type { CandleVenue } from './candle-venue.js';

/** The first recorded candle: 2026-11-19T12:00:00Z; 24 hourly candles follow. */
const FIRST = Date.parse('2026-11-19T12:00:00Z');
const HOUR = 3_600_000;

function fixture(id: string): unknown {
  const file = path.join(projectRoot(), 'test', 'fixtures', 'candles', `${id}.json`);
  return JSON.parse(readFileSync(file, 'utf8')) as unknown;
}

const venue = (id: string): CandleVenue => {
  const found = CANDLE_VENUES.find((candidate) => candidate.id === id);
  if (found === undefined) throw new Error(id);
  return found;
};

describe.each(CANDLE_VENUES.map((candidate) => candidate.id))('%s candles', (id) => {
  it('reads its recorded response: 24 hourly candles with the recorded prices and volumes', () => {
    const candles = venue(id)
      .parse(fixture(id))
      .sort((a, b) => a.time - b.time);
    expect(candles.map((candle) => candle.time)).toEqual(
      Array.from({ length: 24 }, (_, index) => FIRST + index * HOUR),
    );
    expect(candles.map(({ time: _time, ...prices }) => prices)).toEqual(recordedCandles(id));
    for (const candle of candles) {
      expect(candle.low).toBeLessThanOrEqual(Math.min(candle.open, candle.close));
      expect(candle.high).toBeGreaterThanOrEqual(Math.max(candle.open, candle.close));
    }
  });

  it('refuses a body that is not a candle list', () => {
    expect(() => venue(id).parse('<html>')).toThrow(VenueError);
  });
});

describe('candle venue requests', () => {
  const range = { from: FIRST, to: FIRST + 23 * HOUR, count: 24, stepMs: HOUR };
  it.each([
    [
      'binance',
      '/api/v3/klines?symbol=BTCUSDT&interval=1h&startTime=1795089600000&endTime=1795172400000&limit=24',
    ],
    [
      'coinbase',
      '/api/v3/brokerage/market/products/BTC-USD/candles?start=1795089600&end=1795172400&granularity=ONE_HOUR&limit=24',
    ],
    ['kraken', '/0/public/OHLC?pair=XBTUSD&interval=60&since=1795086000'],
    [
      'okx',
      '/api/v5/market/candles?instId=BTC-USDT&bar=1H&after=1795172400001&before=1795089599999&limit=24',
    ],
    [
      'bybit',
      '/v5/market/kline?category=spot&symbol=BTCUSDT&interval=60&start=1795089600000&end=1795172400000&limit=24',
    ],
    [
      'kucoin',
      '/api/v1/market/candles?type=1hour&symbol=BTC-USDT&startAt=1795089600&endAt=1795176000',
    ],
    ['bitstamp', '/api/v2/ohlc/btcusd/?step=3600&start=1795089600&end=1795172400&limit=24'],
    ['gemini', '/v2/candles/btcusd/1hr'],
  ])('%s asks for BTC 1h over a range as its documentation says', (id, expected) => {
    const candles = venue(id);
    const { name } = candles.instrument('BTC');
    expect(candles.path(name, candles.intervals['1h'] as string, range)).toBe(expected);
  });

  it('names Kraken’s legacy assets and leaves 4h to the venues that serve it', () => {
    expect(venue('kraken').instrument('DOGE').name).toBe('XDGUSD');
    expect(
      CANDLE_VENUES.filter((candidate) => candidate.intervals['4h'] === undefined).map(
        (candidate) => candidate.id,
      ),
    ).toEqual(['coinbase', 'gemini']);
  });

  it.each([
    ['kraken', { error: ['EQuery:Unknown asset pair'], result: {} }],
    ['okx', { code: '51001', msg: 'Instrument ID does not exist', data: [] }],
    ['bybit', { retCode: 10001, retMsg: 'Not supported symbols', result: {} }],
    ['kucoin', { code: '400100', msg: 'This pair is not provided at present' }],
  ])('%s reports the error its envelope carries', (id, body) => {
    expect(() => venue(id).parse(body)).toThrow(VenueError);
  });
});

describe('venue limits', () => {
  it.each(CANDLE_VENUES.map((candidate) => candidate.id))(
    '%s answers the longest range a request may ask for within the calls a request may make',
    (id) => {
      expect(VenueCandles.callsFor(venue(id), MAX_CANDLES)).toBeLessThanOrEqual(
        MAX_CALLS_PER_VENUE,
      );
    },
  );
});
