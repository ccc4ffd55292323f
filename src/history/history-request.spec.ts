import { ApiError } from '../common/api-error.js';
import { parseOhlcQuery, parsePriceAtQuery, parseSymbol, parseTime } from './history-request.js';

const NOW = Date.parse('2026-11-20T12:34:56Z');
const HOUR = 3_600_000;

function refusal(run: () => unknown): { status: number; code: string; detail: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError)
      return { status: error.status, code: error.code, detail: error.detail };
    throw error;
  }
  throw new Error('not refused');
}

describe('parseTime', () => {
  it.each([
    ['2026-01-01T00:00:00Z', Date.parse('2026-01-01T00:00:00Z')],
    ['2026-01-01T01:00:00+01:00', Date.parse('2026-01-01T00:00:00Z')],
    ['2026-01-01T00:00:00.250Z', Date.parse('2026-01-01T00:00:00.250Z')],
    ['2026-01-01', Date.parse('2026-01-01T00:00:00Z')],
    ['1767225600', Date.parse('2026-01-01T00:00:00Z')],
  ])('reads %s', (text, expected) => {
    expect(parseTime('t', text)).toBe(expected);
  });

  it.each([
    'yesterday',
    '2026-13-01T00:00:00Z',
    '2026-01-01 00:00',
    '1767225600000000',
    '-5',
    '1.5e9',
    '',
  ])('refuses %p with a 400 naming the parameter', (text) => {
    expect(refusal(() => parseTime('start', text))).toMatchObject({
      status: 400,
      code: 'bad_request',
      detail: expect.stringContaining('start must be ISO 8601') as unknown,
    });
  });
});

describe('parseSymbol', () => {
  it('upper-cases a symbol and refuses a malformed one', () => {
    expect(parseSymbol('btc')).toBe('BTC');
    expect(refusal(() => parseSymbol('BTC-USD'))).toMatchObject({
      status: 400,
      code: 'invalid_symbol',
    });
  });
});

describe('parseOhlcQuery', () => {
  it('defaults to the last 100 1h candles up to the open one', () => {
    const asked = parseOhlcQuery('BTC', {}, NOW);
    expect(asked).toEqual({
      symbol: 'BTC',
      interval: '1h',
      from: Date.parse('2026-11-20T12:00:00Z') - 99 * HOUR,
      to: Date.parse('2026-11-20T12:00:00Z'),
      count: 100,
    });
  });

  it('aligns start and end down to the interval; a future end is now', () => {
    const asked = parseOhlcQuery(
      'BTC',
      { interval: '15m', start: '2026-11-20T10:07:00Z', end: '2099-01-01T00:00:00Z' },
      NOW,
    );
    expect(asked).toMatchObject({
      from: Date.parse('2026-11-20T10:00:00Z'),
      to: Date.parse('2026-11-20T12:30:00Z'),
      count: 11,
    });
  });

  it('takes 500 candles and no more', () => {
    const start = String((NOW - 499 * 60_000) / 1000);
    expect(parseOhlcQuery('BTC', { interval: '1m', start }, NOW).count).toBe(500);
    const tooMany = String((NOW - 500 * 60_000) / 1000);
    expect(
      refusal(() => parseOhlcQuery('BTC', { interval: '1m', start: tooMany }, NOW)),
    ).toMatchObject({
      status: 400,
      detail: 'The range holds 501 1m candles; at most 500 per request.',
    });
  });

  it.each([
    [{ interval: '2h' }, 'interval must be one of 1m, 5m, 15m, 1h, 4h, 1d; got "2h".'],
    [{ start: '2026-11-21T00:00:00Z' }, 'start is in the future.'],
    [{ start: '2026-11-20T10:00:00Z', end: '2026-11-20T09:00:00Z' }, 'start is after end.'],
    [
      { end: 'soon' },
      'end must be ISO 8601 (2026-01-01T00:00:00Z) or Unix seconds (1767225600); got "soon".',
    ],
    [{ interval: ['1h', '1d'] }, 'interval may be given once.'],
  ])('refuses %j with a 400', (query, detail) => {
    expect(refusal(() => parseOhlcQuery('BTC', query, NOW))).toEqual({
      status: 400,
      code: 'bad_request',
      detail,
    });
  });
});

describe('parsePriceAtQuery', () => {
  it('reads t, and refuses it missing, malformed or in the future', () => {
    expect(parsePriceAtQuery({ t: '2026-01-01T00:00:00Z' }, NOW)).toBe(
      Date.parse('2026-01-01T00:00:00Z'),
    );
    expect(refusal(() => parsePriceAtQuery({}, NOW)).detail).toBe(
      't is required: ISO 8601 or Unix seconds.',
    );
    expect(refusal(() => parsePriceAtQuery({ t: 'noon' }, NOW)).status).toBe(400);
    expect(refusal(() => parsePriceAtQuery({ t: String(NOW / 1000 + 60) }, NOW)).detail).toBe(
      't is in the future.',
    );
  });
});
