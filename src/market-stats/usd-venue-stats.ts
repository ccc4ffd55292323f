import { COINGECKO_IDS } from '../markets/coingecko-ids.js';
import { splitBySuffix } from '../markets/instrument-names.js';
import { parseKrakenAssetPairs, type KrakenPair } from '../markets/kraken.venue.js';
import type { VenueConnection } from '../markets/venue-connection.js';
import { VenueError } from '../markets/venue-error.js';
import {
  expectArray,
  expectRecord,
  isRecord,
  parseAmount,
  parseEpoch,
  parsePrice,
} from '../markets/venue-json.js';
import { marketFigures, openFromChange, parseSigned, productOf } from './stats-json.js';
import { singleRequestVenue, type MarketStats, type StatsVenue } from './venue-stats.js';

/*
 * The venues read in USD only, as their prices are, and CoinGecko, which adds market caps.
 * Each reuses the request its prices are read with where that request carries 24 h figures.
 */

/** Coinbase's products, the prices' own request: a 24 h change and volumes, no high or low. */
export const COINBASE_STATS = singleRequestVenue({
  id: 'coinbase',
  path: '/api/v3/brokerage/market/products',
  fixture: 'coinbase',
  minIntervalMs: 1000,
  parse: parseCoinbaseStats,
});

/** Online USD products; USDC products alias the USD books and would count one market twice. */
export function parseCoinbaseStats(body: unknown, receivedAt: number): MarketStats[] {
  const stats: MarketStats[] = [];
  for (const product of expectArray(expectRecord(body, 'body').products, 'products')) {
    if (!isRecord(product) || !isTradable(product)) continue;
    if (product.quote_currency_id !== 'USD' || typeof product.base_currency_id !== 'string')
      continue;
    const figures = marketFigures({
      last: product.price,
      volume: product.volume_24h,
      quoteVolume: product.approximate_quote_24h_volume,
    });
    if (figures === undefined) continue;
    const percent = parseSigned(product.price_percentage_change_24h);
    const open = openFromChange(figures.last, percent === undefined ? undefined : percent / 100);
    stats.push({
      symbol: product.base_currency_id.toUpperCase(),
      quote: 'USD',
      ...figures,
      ...(open === undefined ? {} : { open }),
      observedAt: receivedAt,
    });
  }
  return stats;
}

function isTradable(product: Record<string, unknown>): boolean {
  return (
    product.status === 'online' &&
    product.trading_disabled !== true &&
    product.is_disabled !== true &&
    product.view_only !== true
  );
}

/** Bitstamp's all-pairs ticker, the prices' own request: `open_24` is the price 24 h ago. */
export const BITSTAMP_STATS = singleRequestVenue({
  id: 'bitstamp',
  path: '/api/v2/ticker/',
  fixture: 'bitstamp',
  minIntervalMs: 1000,
  parse: parseBitstampStats,
});

/** `open` is the day's first price and is not used; quote volume is volume × 24 h VWAP. */
export function parseBitstampStats(body: unknown, receivedAt: number): MarketStats[] {
  const stats: MarketStats[] = [];
  for (const ticker of expectArray(body, 'body')) {
    if (!isRecord(ticker) || typeof ticker.pair !== 'string') continue;
    const [base, quote] = ticker.pair.split('/');
    if (base === undefined || base === '' || quote !== 'USD') continue;
    const figures = marketFigures({
      last: ticker.last,
      open: ticker.open_24,
      high: ticker.high,
      low: ticker.low,
      volume: ticker.volume,
      quoteVolume: productOf(parseAmount(ticker.volume), parsePrice(ticker.vwap)),
    });
    if (figures === undefined) continue;
    const observedAt = parseEpoch(ticker.timestamp, 's') ?? receivedAt;
    stats.push({
      symbol: base.toUpperCase(),
      quote: 'USD',
      ...figures,
      observedAt: Math.min(observedAt, receivedAt),
    });
  }
  return stats;
}

/** Gemini's price feed, the prices' own request: a 24 h change (a fraction) and nothing else. */
export const GEMINI_STATS = singleRequestVenue({
  id: 'gemini',
  path: '/v1/pricefeed',
  fixture: 'gemini',
  minIntervalMs: 1000,
  parse: parseGeminiStats,
});

export function parseGeminiStats(body: unknown, receivedAt: number): MarketStats[] {
  const stats: MarketStats[] = [];
  for (const row of expectArray(body, 'body')) {
    if (!isRecord(row) || typeof row.pair !== 'string') continue;
    const instrument = splitBySuffix(row.pair, ['USD'] as const);
    const figures = marketFigures({ last: row.price });
    if (instrument === undefined || figures === undefined) continue;
    const open = openFromChange(figures.last, parseSigned(row.percentChange24h));
    stats.push({
      symbol: instrument.base,
      quote: 'USD',
      ...figures,
      ...(open === undefined ? {} : { open }),
      observedAt: receivedAt,
    });
  }
  return stats;
}

const KRAKEN_REQUESTS = {
  ticker: { path: '/0/public/Ticker', fixture: 'kraken-ticker' },
  assetpairs: { path: '/0/public/AssetPairs', fixture: 'kraken-assetpairs' },
} as const;
/** Pair names change rarely; re-read them hourly. */
const KRAKEN_PAIRS_TTL_MS = 60 * 60 * 1000;

/**
 * Kraken's ticker, the prices' own request. `h`, `l`, `v` and `p` are [today, last 24 h]: the
 * second is used; `o` is the open since midnight UTC, another window, and is not used.
 */
export const KRAKEN_STATS: StatsVenue = {
  id: 'kraken',
  requests: [KRAKEN_REQUESTS.ticker, KRAKEN_REQUESTS.assetpairs],
  minIntervalMs: 2000,
  create: (connection) => new KrakenStats(connection),
};

class KrakenStats {
  private pairs:
    { readonly byKey: ReadonlyMap<string, KrakenPair>; readonly at: number } | undefined;

  constructor(private readonly venue: VenueConnection) {}

  async fetchStats(): Promise<MarketStats[]> {
    const now = this.venue.now();
    if (this.pairs === undefined || now - this.pairs.at >= KRAKEN_PAIRS_TTL_MS) {
      const body = await this.venue.getJson(KRAKEN_REQUESTS.assetpairs.path);
      this.pairs = { byKey: parseKrakenAssetPairs(body), at: now };
    }
    const body = await this.venue.getJson(KRAKEN_REQUESTS.ticker.path);
    return parseKrakenStats(body, this.pairs.byKey, this.venue.now());
  }
}

export function parseKrakenStats(
  body: unknown,
  pairs: ReadonlyMap<string, KrakenPair>,
  receivedAt: number,
): MarketStats[] {
  const envelope = expectRecord(body, 'body');
  const errors = expectArray(envelope.error ?? [], 'error');
  if (errors.length > 0) {
    throw new VenueError('venue_error', `Kraken error: ${errors.map(String).join('; ')}`);
  }
  const stats: MarketStats[] = [];
  for (const [key, ticker] of Object.entries(expectRecord(envelope.result, 'result'))) {
    const pair = pairs.get(key);
    if (pair?.quote !== 'USD' || !isRecord(ticker)) continue;
    const day = (field: unknown): unknown => (Array.isArray(field) ? field[1] : undefined);
    const figures = marketFigures({
      last: Array.isArray(ticker.c) ? ticker.c[0] : undefined,
      high: day(ticker.h),
      low: day(ticker.l),
      volume: day(ticker.v),
      quoteVolume: productOf(parseAmount(day(ticker.v)), parsePrice(day(ticker.p))),
    });
    if (figures === undefined) continue;
    stats.push({ symbol: pair.base, quote: 'USD', ...figures, observedAt: receivedAt });
  }
  return stats;
}

/** Our symbol for each CoinGecko id. */
const SYMBOLS_BY_ID: ReadonlyMap<string, string> = new Map(
  Object.entries(COINGECKO_IDS).map(([symbol, id]) => [id, symbol]),
);

/** CoinGecko's simple prices with market caps, for every mapped asset in one call. */
export const COINGECKO_MARKET_CAPS = singleRequestVenue({
  id: 'coingecko',
  path: `/api/v3/simple/price?ids=${Object.values(COINGECKO_IDS).join(',')}&vs_currencies=usd&include_market_cap=true&include_last_updated_at=true`,
  fixture: 'coingecko-market-caps',
  // keyless callers get a few calls a minute, and market caps hardly move faster than that
  minIntervalMs: 60_000,
  marketCapOnly: true,
  parse: parseCoingeckoMarketCaps,
});

/** Each asset's USD price (what the cap is checked against) and market cap, when reported. */
export function parseCoingeckoMarketCaps(body: unknown, receivedAt: number): MarketStats[] {
  const stats: MarketStats[] = [];
  for (const [id, entry] of Object.entries(expectRecord(body, 'body'))) {
    const symbol = SYMBOLS_BY_ID.get(id);
    if (symbol === undefined || !isRecord(entry)) continue;
    const last = parsePrice(entry.usd);
    const marketCapUsd = parsePrice(entry.usd_market_cap);
    if (last === undefined || marketCapUsd === undefined) continue;
    const observedAt = parseEpoch(entry.last_updated_at, 's') ?? receivedAt;
    stats.push({
      symbol,
      quote: 'USD',
      last,
      marketCapUsd,
      observedAt: Math.min(observedAt, receivedAt),
    });
  }
  return stats;
}
