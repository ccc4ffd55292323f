import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FakeVenue, VenueBehaviour } from './fake-venue.js';
import { projectRoot } from './project-root.js';

/*
 * The venues' candle endpoints replayed from test/fixtures/candles/<venue>.json (24 BTC 1-hour
 * candles in the venue's shape) for the last 7 days: the candle at start t is recorded row
 * floor(t / interval) mod 24 (oldest first), its time rewritten to t. Written from the venues'
 * documentation, not from src/history, so the e2e tests read the fixtures independently.
 */

const FIXTURES = path.join(projectRoot(), 'test', 'fixtures', 'candles');
export const REPLAYED_HISTORY_MS = 7 * 86_400_000;

type Key = string | number;
type Row = Record<Key, unknown>;

interface Ask {
  readonly instrument: string;
  readonly stepMs: number;
  readonly from: number;
  readonly to: number;
  readonly limit: number;
  /** The venue answers the newest `limit` of the range rather than the oldest. */
  readonly newest?: boolean;
}

interface CandleReplaySpec {
  readonly prefix: string;
  readonly instrument: string;
  readonly fields: { time: Key; open: Key; high: Key; low: Key; close: Key; volume: Key };
  readonly unit: 's' | 'ms';
  readonly newestFirst: boolean;
  ask(url: URL, now: number): Ask | undefined;
  rows(body: unknown): Row[];
  /** Fields besides `time` naming the candle's time (Binance's close time). */
  retime?(row: Row, start: number, stepMs: number): void;
}

const MINUTES: Record<string, number> = {
  '1m': 1,
  '5m': 5,
  '15m': 15,
  '1h': 60,
  '4h': 240,
  '1d': 1440,
};
const ms = (minutes: number | undefined): number => (minutes ?? Number.NaN) * 60_000;
const num = (url: URL, name: string): number => Number(url.searchParams.get(name));
const align = (time: number, step: number): number => Math.floor(time / step) * step;

export const CANDLE_REPLAYS: Readonly<Record<string, CandleReplaySpec>> = {
  binance: {
    prefix: '/api/v3/klines',
    instrument: 'BTCUSDT',
    fields: { time: 0, open: 1, high: 2, low: 3, close: 4, volume: 5 },
    unit: 'ms',
    newestFirst: false,
    ask: (url) => ({
      instrument: url.searchParams.get('symbol') ?? '',
      stepMs: ms(MINUTES[url.searchParams.get('interval') ?? '']),
      from: num(url, 'startTime'),
      to: num(url, 'endTime'),
      limit: Math.min(num(url, 'limit') || 500, 1000),
    }),
    rows: (body) => body as Row[],
    retime: (row, start, step) => {
      row[6] = start + step - 1;
    },
  },
  coinbase: {
    prefix: '/api/v3/brokerage/market/products/',
    instrument: 'BTC-USD',
    fields: {
      time: 'start',
      open: 'open',
      high: 'high',
      low: 'low',
      close: 'close',
      volume: 'volume',
    },
    unit: 's',
    newestFirst: true,
    ask: (url) => {
      const granularity: Record<string, number> = {
        ONE_MINUTE: 1,
        FIVE_MINUTE: 5,
        FIFTEEN_MINUTE: 15,
        ONE_HOUR: 60,
        ONE_DAY: 1440,
      };
      return {
        instrument: url.pathname.split('/')[6] ?? '',
        stepMs: ms(granularity[url.searchParams.get('granularity') ?? '']),
        from: num(url, 'start') * 1000,
        to: num(url, 'end') * 1000,
        limit: Math.min(num(url, 'limit') || 350, 350),
      };
    },
    rows: (body) => (body as { candles: Row[] }).candles,
  },
  kraken: {
    prefix: '/0/public/OHLC',
    instrument: 'XBTUSD',
    fields: { time: 0, open: 1, high: 2, low: 3, close: 4, volume: 6 },
    unit: 's',
    newestFirst: false,
    ask: (url, now) => {
      const stepMs = ms(num(url, 'interval'));
      return {
        instrument: url.searchParams.get('pair') ?? '',
        stepMs,
        from: num(url, 'since') * 1000 + 1,
        to: now,
        limit: 720,
        newest: true,
      };
    },
    rows: (body) => Object.values((body as { result: Record<string, Row[]> }).result)[0] as Row[],
  },
  okx: {
    prefix: '/api/v5/market/candles',
    instrument: 'BTC-USDT',
    fields: { time: 0, open: 1, high: 2, low: 3, close: 4, volume: 5 },
    unit: 'ms',
    newestFirst: true,
    ask: (url) => {
      const bars: Record<string, number> = {
        '1m': 1,
        '5m': 5,
        '15m': 15,
        '1H': 60,
        '4H': 240,
        '1Dutc': 1440,
      };
      return {
        instrument: url.searchParams.get('instId') ?? '',
        stepMs: ms(bars[url.searchParams.get('bar') ?? '']),
        from: num(url, 'before') + 1,
        to: num(url, 'after') - 1,
        limit: Math.min(num(url, 'limit') || 100, 300),
        newest: true,
      };
    },
    rows: (body) => (body as { data: Row[] }).data,
  },
  bybit: {
    prefix: '/v5/market/kline',
    instrument: 'BTCUSDT',
    fields: { time: 0, open: 1, high: 2, low: 3, close: 4, volume: 5 },
    unit: 'ms',
    newestFirst: true,
    ask: (url) => {
      const interval = url.searchParams.get('interval') ?? '';
      return {
        instrument: url.searchParams.get('symbol') ?? '',
        stepMs: ms(interval === 'D' ? 1440 : Number(interval)),
        from: num(url, 'start'),
        to: num(url, 'end'),
        limit: Math.min(num(url, 'limit') || 200, 1000),
        newest: true,
      };
    },
    rows: (body) => (body as { result: { list: Row[] } }).result.list,
  },
  kucoin: {
    prefix: '/api/v1/market/candles',
    instrument: 'BTC-USDT',
    fields: { time: 0, open: 1, close: 2, high: 3, low: 4, volume: 5 },
    unit: 's',
    newestFirst: true,
    ask: (url) => {
      const types: Record<string, number> = {
        '1min': 1,
        '5min': 5,
        '15min': 15,
        '1hour': 60,
        '4hour': 240,
        '1day': 1440,
      };
      return {
        instrument: url.searchParams.get('symbol') ?? '',
        stepMs: ms(types[url.searchParams.get('type') ?? '']),
        from: num(url, 'startAt') * 1000,
        // endAt is exclusive
        to: num(url, 'endAt') * 1000 - 1,
        limit: 1500,
      };
    },
    rows: (body) => (body as { data: Row[] }).data,
  },
  bitstamp: {
    prefix: '/api/v2/ohlc/',
    instrument: 'btcusd',
    fields: {
      time: 'timestamp',
      open: 'open',
      high: 'high',
      low: 'low',
      close: 'close',
      volume: 'volume',
    },
    unit: 's',
    newestFirst: false,
    ask: (url) => ({
      instrument: url.pathname.split('/')[4] ?? '',
      stepMs: num(url, 'step') * 1000,
      from: num(url, 'start') * 1000,
      to: num(url, 'end') * 1000,
      limit: Math.min(num(url, 'limit') || 1000, 1000),
    }),
    rows: (body) => (body as { data: { ohlc: Row[] } }).data.ohlc,
  },
  gemini: {
    prefix: '/v2/candles/',
    instrument: 'btcusd',
    fields: { time: 0, open: 1, high: 2, low: 3, close: 4, volume: 5 },
    unit: 'ms',
    newestFirst: true,
    ask: (url, now) => {
      const [, , , instrument = '', interval = ''] = url.pathname.split('/');
      const names: Record<string, number> = {
        '1m': 1,
        '5m': 5,
        '15m': 15,
        '1hr': 60,
        '1day': 1440,
      };
      return {
        instrument,
        stepMs: ms(names[interval]),
        from: 0,
        to: now,
        limit: GEMINI_RECENT,
        newest: true,
      };
    },
    rows: (body) => body as Row[],
  },
};

/** Gemini answers its most recent candles only: this many. */
export const GEMINI_RECENT = 60;

/** A recorded venue candle: its prices and volume as numbers. */
export interface RecordedCandle {
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  readonly volume: number;
}

function fixture(venue: string): unknown {
  return JSON.parse(readFileSync(path.join(FIXTURES, `${venue}.json`), 'utf8')) as unknown;
}

function chronological(spec: CandleReplaySpec, body: unknown): Row[] {
  return [...spec.rows(body)].sort(
    (a, b) => Number(a[spec.fields.time]) - Number(b[spec.fields.time]),
  );
}

/** A venue's recorded candles, oldest first, as numbers. */
export function recordedCandles(venue: string): RecordedCandle[] {
  const spec = CANDLE_REPLAYS[venue];
  if (spec === undefined) throw new Error(`no candle replay for ${venue}`);
  const { fields } = spec;
  return chronological(spec, fixture(venue)).map((row) => ({
    open: Number(row[fields.open]),
    high: Number(row[fields.high]),
    low: Number(row[fields.low]),
    close: Number(row[fields.close]),
    volume: Number(row[fields.volume]),
  }));
}

/** The recorded row a replay serves at `start` for an interval of `stepMs`. */
export function replayedIndex(start: number, stepMs: number, rows: number): number {
  return Math.floor(start / stepMs) % rows;
}

/** The starts a replay answers for `ask` at `now`: within the last 7 days, up to the open candle. */
export function replayedStarts(ask: Ask, now: number): number[] {
  const first = Math.max(
    align(ask.from + ask.stepMs - 1, ask.stepMs),
    align(now - REPLAYED_HISTORY_MS, ask.stepMs),
  );
  const last = Math.min(align(ask.to, ask.stepMs), align(now, ask.stepMs));
  const starts: number[] = [];
  for (let start = first; start <= last; start += ask.stepMs) starts.push(start);
  return ask.newest === true ? starts.slice(-ask.limit) : starts.slice(0, ask.limit);
}

/** How a venue's candle endpoint misbehaves: hangs, fails, or multiplies every price. */
export type CandleFault =
  | { readonly kind: 'hang' }
  | { readonly kind: 'down' }
  | { readonly kind: 'scale'; readonly factor: number };

const faults = new WeakMap<FakeVenue, CandleFault>();

/** From now on the venue's candle endpoint misbehaves as `fault` says; undefined heals it. */
export function setCandleFault(venue: FakeVenue, fault: CandleFault | undefined): void {
  if (fault === undefined) faults.delete(venue);
  else faults.set(venue, fault);
}

function scaled(value: unknown, factor: number): unknown {
  return typeof value === 'number' ? value * factor : String(Number(value) * factor);
}

/** The venue's candle path answered from its fixture, when it has one. */
export function replayCandles(id: string, venue: FakeVenue): void {
  const spec = CANDLE_REPLAYS[id];
  if (spec === undefined) return;
  venue.onPrefix(spec.prefix, (url) => {
    const fault = faults.get(venue);
    if (fault?.kind === 'hang') return { kind: 'hang' };
    if (fault?.kind === 'down') return { kind: 'raw', status: 500, body: 'internal error' };
    const now = Date.now();
    const ask = spec.ask(url, now);
    const body = fixture(id);
    const recorded = chronological(spec, body);
    const rows = spec.rows(body);
    rows.length = 0;
    if (ask === undefined || ask.instrument !== spec.instrument || !Number.isFinite(ask.stepMs)) {
      return { kind: 'json', body: () => body };
    }
    for (const start of replayedStarts(ask, now)) {
      const row = structuredClone(
        recorded[replayedIndex(start, ask.stepMs, recorded.length)] as Row,
      );
      const time = spec.unit === 's' ? start / 1000 : start;
      row[spec.fields.time] = typeof row[spec.fields.time] === 'string' ? String(time) : time;
      spec.retime?.(row, start, ask.stepMs);
      if (fault?.kind === 'scale') {
        for (const key of ['open', 'high', 'low', 'close'] as const) {
          row[spec.fields[key]] = scaled(row[spec.fields[key]], fault.factor);
        }
      }
      rows.push(row);
    }
    if (spec.newestFirst) rows.reverse();
    return { kind: 'json', body: () => body } satisfies VenueBehaviour;
  });
}
