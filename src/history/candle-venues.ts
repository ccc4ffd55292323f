import { venueReportedError } from '../markets/venue-error.js';
import { expectRecord } from '../markets/venue-json.js';
import type { CandleVenue } from './candle-venue.js';
import { objectCandles, rowCandles, seconds } from './candle-venue.js';

/*
 * Each venue's public candle endpoint (docs/venues.md, "Candle endpoints"). Venues quoting in
 * USDT list `<BASE>USDT` or `<BASE>-USDT`; the USD venues their USD book.
 */

const usdt = (separator: string) => (symbol: string) => ({
  name: `${symbol}${separator}USDT`,
  quote: 'USDT' as const,
});

/** Binance klines: `[openTime ms, open, high, low, close, volume, closeTime, quoteVolume, …]`. */
export const BINANCE_CANDLES: CandleVenue = {
  id: 'binance',
  defaultBaseUrl: 'https://api.binance.com',
  intervals: { '1m': '1m', '5m': '5m', '15m': '15m', '1h': '1h', '4h': '4h', '1d': '1d' },
  perCall: 1000,
  instrument: usdt(''),
  path: (name, interval, { from, to, count }) =>
    `/api/v3/klines?symbol=${name}&interval=${interval}&startTime=${from}&endTime=${to}&limit=${count}`,
  parse: (body) =>
    rowCandles(
      body,
      { time: 0, open: 1, high: 2, low: 3, close: 4, volume: 5, unit: 'ms' },
      'klines',
    ),
};

/** Coinbase Advanced Trade public candles: `{candles: [{start s, low, high, open, close, volume}]}`. */
export const COINBASE_CANDLES: CandleVenue = {
  id: 'coinbase',
  defaultBaseUrl: 'https://api.coinbase.com',
  intervals: {
    '1m': 'ONE_MINUTE',
    '5m': 'FIVE_MINUTE',
    '15m': 'FIFTEEN_MINUTE',
    '1h': 'ONE_HOUR',
    '1d': 'ONE_DAY',
  },
  perCall: 350,
  instrument: (symbol) => ({ name: `${symbol}-USD`, quote: 'USD' }),
  path: (name, interval, { from, to, count }) =>
    `/api/v3/brokerage/market/products/${name}/candles?start=${seconds(from)}&end=${seconds(to)}&granularity=${interval}&limit=${count}`,
  parse: (body) =>
    objectCandles(expectRecord(body, 'body').candles, { time: 'start', unit: 's' }, 'candles'),
};

/** Kraken's names for the assets it lists under legacy codes. */
const KRAKEN_ASSETS: Readonly<Record<string, string>> = { BTC: 'XBT', DOGE: 'XDG' };

/** Kraken OHLC, the most recent 720 candles: `{error, result: {<pair>: [[time s, o, h, l, c, vwap, volume, count]], last}}`. */
export const KRAKEN_CANDLES: CandleVenue = {
  id: 'kraken',
  defaultBaseUrl: 'https://api.kraken.com',
  intervals: { '1m': '1', '5m': '5', '15m': '15', '1h': '60', '4h': '240', '1d': '1440' },
  perCall: 720,
  instrument: (symbol) => ({ name: `${KRAKEN_ASSETS[symbol] ?? symbol}USD`, quote: 'USD' }),
  // `since` is exclusive: one step earlier so the first candle is in the answer
  path: (name, interval, { from, stepMs }) =>
    `/0/public/OHLC?pair=${name}&interval=${interval}&since=${seconds(from - stepMs)}`,
  parse: (body) => {
    const record = expectRecord(body, 'body');
    if (Array.isArray(record.error) && record.error.length > 0) {
      throw venueReportedError('kraken', 'error', record.error.join(', '));
    }
    const result = expectRecord(record.result, 'result');
    const pair = Object.keys(result).find((key) => key !== 'last');
    return rowCandles(
      pair === undefined ? [] : result[pair],
      { time: 0, open: 1, high: 2, low: 3, close: 4, volume: 6, unit: 's' },
      'OHLC',
    );
  },
};

/** OKX recent candles, newest first: `{code, data: [[ts ms, o, h, l, c, vol, volCcy, volCcyQuote, confirm]]}`. */
export const OKX_CANDLES: CandleVenue = {
  id: 'okx',
  defaultBaseUrl: 'https://www.okx.com',
  intervals: { '1m': '1m', '5m': '5m', '15m': '15m', '1h': '1H', '4h': '4H', '1d': '1Dutc' },
  perCall: 300,
  instrument: usdt('-'),
  // `after`: older than; `before`: newer than
  path: (name, interval, { from, to, count }) =>
    `/api/v5/market/candles?instId=${name}&bar=${interval}&after=${to + 1}&before=${from - 1}&limit=${count}`,
  parse: (body) => {
    const record = expectRecord(body, 'body');
    if (record.code !== '0') throw venueReportedError('okx', record.code, record.msg);
    return rowCandles(
      record.data,
      { time: 0, open: 1, high: 2, low: 3, close: 4, volume: 5, unit: 'ms' },
      'data',
    );
  },
};

/** Bybit v5 spot kline, newest first: `{retCode, result: {list: [[start ms, o, h, l, c, volume, turnover]]}}`. */
export const BYBIT_CANDLES: CandleVenue = {
  id: 'bybit',
  defaultBaseUrl: 'https://api.bybit.com',
  intervals: { '1m': '1', '5m': '5', '15m': '15', '1h': '60', '4h': '240', '1d': 'D' },
  perCall: 1000,
  instrument: usdt(''),
  path: (name, interval, { from, to, count }) =>
    `/v5/market/kline?category=spot&symbol=${name}&interval=${interval}&start=${from}&end=${to}&limit=${count}`,
  parse: (body) => {
    const record = expectRecord(body, 'body');
    if (record.retCode !== 0) throw venueReportedError('bybit', record.retCode, record.retMsg);
    return rowCandles(
      expectRecord(record.result, 'result').list,
      { time: 0, open: 1, high: 2, low: 3, close: 4, volume: 5, unit: 'ms' },
      'list',
    );
  },
};

/** KuCoin candles, newest first: `{code, data: [[time s, open, close, high, low, volume, turnover]]}`. */
export const KUCOIN_CANDLES: CandleVenue = {
  id: 'kucoin',
  defaultBaseUrl: 'https://api.kucoin.com',
  intervals: {
    '1m': '1min',
    '5m': '5min',
    '15m': '15min',
    '1h': '1hour',
    '4h': '4hour',
    '1d': '1day',
  },
  perCall: 1500,
  instrument: usdt('-'),
  // `endAt` is exclusive
  path: (name, interval, { from, to, stepMs }) =>
    `/api/v1/market/candles?type=${interval}&symbol=${name}&startAt=${seconds(from)}&endAt=${seconds(to + stepMs)}`,
  parse: (body) => {
    const record = expectRecord(body, 'body');
    if (record.code !== '200000') throw venueReportedError('kucoin', record.code, record.msg);
    return rowCandles(
      record.data,
      { time: 0, open: 1, close: 2, high: 3, low: 4, volume: 5, unit: 's' },
      'data',
    );
  },
};

/** Bitstamp OHLC: `{data: {pair, ohlc: [{timestamp s, open, high, low, close, volume}]}}`. */
export const BITSTAMP_CANDLES: CandleVenue = {
  id: 'bitstamp',
  defaultBaseUrl: 'https://www.bitstamp.net',
  intervals: {
    '1m': '60',
    '5m': '300',
    '15m': '900',
    '1h': '3600',
    '4h': '14400',
    '1d': '86400',
  },
  perCall: 1000,
  instrument: (symbol) => ({ name: `${symbol.toLowerCase()}usd`, quote: 'USD' }),
  path: (name, interval, { from, to, count }) =>
    `/api/v2/ohlc/${name}/?step=${interval}&start=${seconds(from)}&end=${seconds(to)}&limit=${count}`,
  parse: (body) =>
    objectCandles(
      expectRecord(expectRecord(body, 'body').data, 'data').ohlc,
      { time: 'timestamp', unit: 's' },
      'ohlc',
    ),
};

/** Gemini v2 candles, its most recent ones only, newest first: `[[time ms, o, h, l, c, volume]]`. */
export const GEMINI_CANDLES: CandleVenue = {
  id: 'gemini',
  defaultBaseUrl: 'https://api.gemini.com',
  intervals: { '1m': '1m', '5m': '5m', '15m': '15m', '1h': '1hr', '1d': '1day' },
  perCall: Number.MAX_SAFE_INTEGER,
  recentOnly: true,
  instrument: (symbol) => ({ name: `${symbol.toLowerCase()}usd`, quote: 'USD' }),
  path: (name, interval) => `/v2/candles/${name}/${interval}`,
  parse: (body) =>
    rowCandles(
      body,
      { time: 0, open: 1, high: 2, low: 3, close: 4, volume: 5, unit: 'ms' },
      'candles',
    ),
};

/** Every venue with a candle endpoint, in the markets' default order. */
export const CANDLE_VENUES: readonly CandleVenue[] = [
  COINBASE_CANDLES,
  KRAKEN_CANDLES,
  BITSTAMP_CANDLES,
  GEMINI_CANDLES,
  BINANCE_CANDLES,
  OKX_CANDLES,
  BYBIT_CANDLES,
  KUCOIN_CANDLES,
];
