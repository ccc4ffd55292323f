import { isQuoteCurrency, splitBySuffix, splitDashed } from '../markets/instrument-names.js';
import { venueReportedError } from '../markets/venue-error.js';
import { expectArray, expectRecord, isRecord, parseEpoch } from '../markets/venue-json.js';
import { marketFigures, parseSigned } from './stats-json.js';
import { singleRequestVenue, type MarketStats } from './venue-stats.js';

/*
 * The venues that quote in stablecoins (USDT, USDC, and USD where listed): each lists an asset
 * in several markets, and every market's rolling 24 h figures are in its own quote currency.
 */

const STABLE_QUOTES = ['USDT', 'USDC'] as const;

/** Binance's rolling 24 h ticker of every symbol (weight 80): the price feed has no figures. */
export const BINANCE_STATS = singleRequestVenue({
  id: 'binance',
  path: '/api/v3/ticker/24hr',
  fixture: 'binance-24hr',
  // weight 80 of 6000/min per IP: even every 10 s it is 8 % of the limit, beside the prices' 4 %
  minIntervalMs: 10_000,
  parse: parseBinance24hr,
});

export function parseBinance24hr(body: unknown, receivedAt: number): MarketStats[] {
  const stats: MarketStats[] = [];
  for (const ticker of expectArray(body, 'body')) {
    if (!isRecord(ticker) || typeof ticker.symbol !== 'string') continue;
    const instrument = splitBySuffix(ticker.symbol, STABLE_QUOTES);
    const figures = marketFigures({
      last: ticker.lastPrice,
      open: ticker.openPrice,
      high: ticker.highPrice,
      low: ticker.lowPrice,
      volume: ticker.volume,
      quoteVolume: ticker.quoteVolume,
    });
    if (instrument === undefined || figures === undefined) continue;
    const observedAt = parseEpoch(ticker.closeTime, 'ms') ?? receivedAt;
    stats.push({
      symbol: instrument.base,
      quote: instrument.quote,
      ...figures,
      observedAt: Math.min(observedAt, receivedAt),
    });
  }
  return stats;
}

/** OKX's spot tickers, the prices' own request: `open24h` is rolling (`sodUtc0` is not used). */
export const OKX_STATS = singleRequestVenue({
  id: 'okx',
  path: '/api/v5/market/tickers?instType=SPOT',
  fixture: 'okx',
  minIntervalMs: 1000,
  parse: parseOkxStats,
});

export function parseOkxStats(body: unknown, receivedAt: number): MarketStats[] {
  const envelope = expectRecord(body, 'body');
  if (envelope.code !== '0') throw venueReportedError('OKX', envelope.code, envelope.msg);
  const stats: MarketStats[] = [];
  for (const ticker of expectArray(envelope.data, 'data')) {
    if (!isRecord(ticker) || typeof ticker.instId !== 'string') continue;
    const instrument = splitDashed(ticker.instId);
    if (instrument === undefined || !isQuoteCurrency(instrument.quote)) continue;
    const figures = marketFigures({
      last: ticker.last,
      open: ticker.open24h,
      high: ticker.high24h,
      low: ticker.low24h,
      volume: ticker.vol24h,
      quoteVolume: ticker.volCcy24h,
    });
    if (figures === undefined) continue;
    const observedAt = parseEpoch(ticker.ts, 'ms') ?? receivedAt;
    stats.push({
      symbol: instrument.base,
      quote: instrument.quote,
      ...figures,
      observedAt: Math.min(observedAt, receivedAt),
    });
  }
  return stats;
}

/** Bybit's spot tickers, the prices' own request: `prevPrice24h` is the price 24 h ago. */
export const BYBIT_STATS = singleRequestVenue({
  id: 'bybit',
  path: '/v5/market/tickers?category=spot',
  fixture: 'bybit',
  minIntervalMs: 1000,
  parse: parseBybitStats,
});

export function parseBybitStats(body: unknown, receivedAt: number): MarketStats[] {
  const envelope = expectRecord(body, 'body');
  if (envelope.retCode !== 0) throw venueReportedError('Bybit', envelope.retCode, envelope.retMsg);
  const list = expectArray(expectRecord(envelope.result, 'result').list, 'list');
  const observedAt = Math.min(parseEpoch(envelope.time, 'ms') ?? receivedAt, receivedAt);
  const stats: MarketStats[] = [];
  for (const ticker of list) {
    if (!isRecord(ticker) || typeof ticker.symbol !== 'string') continue;
    const instrument = splitBySuffix(ticker.symbol, STABLE_QUOTES);
    const figures = marketFigures({
      last: ticker.lastPrice,
      open: ticker.prevPrice24h,
      high: ticker.highPrice24h,
      low: ticker.lowPrice24h,
      volume: ticker.volume24h,
      quoteVolume: ticker.turnover24h,
    });
    if (instrument === undefined || figures === undefined) continue;
    stats.push({ symbol: instrument.base, quote: instrument.quote, ...figures, observedAt });
  }
  return stats;
}

/** KuCoin's all-tickers snapshot, the prices' own request: the open is `last − changePrice`. */
export const KUCOIN_STATS = singleRequestVenue({
  id: 'kucoin',
  path: '/api/v1/market/allTickers',
  fixture: 'kucoin',
  minIntervalMs: 2000,
  parse: parseKucoinStats,
});

export function parseKucoinStats(body: unknown, receivedAt: number): MarketStats[] {
  const envelope = expectRecord(body, 'body');
  if (envelope.code !== '200000') throw venueReportedError('KuCoin', envelope.code, envelope.msg);
  const data = expectRecord(envelope.data, 'data');
  const observedAt = Math.min(parseEpoch(data.time, 'ms') ?? receivedAt, receivedAt);
  const stats: MarketStats[] = [];
  for (const ticker of expectArray(data.ticker, 'ticker')) {
    if (!isRecord(ticker)) continue;
    const name = typeof ticker.symbolName === 'string' ? ticker.symbolName : ticker.symbol;
    const instrument = splitDashed(typeof name === 'string' ? name : '');
    if (instrument === undefined || !isQuoteCurrency(instrument.quote)) continue;
    const figures = marketFigures({
      last: ticker.last,
      high: ticker.high,
      low: ticker.low,
      volume: ticker.vol,
      quoteVolume: ticker.volValue,
    });
    if (figures === undefined) continue;
    const change = parseSigned(ticker.changePrice);
    const open = change === undefined ? undefined : figures.last - change;
    stats.push({
      symbol: instrument.base,
      quote: instrument.quote,
      ...figures,
      ...(open !== undefined && open > 0 ? { open } : {}),
      observedAt,
    });
  }
  return stats;
}
