import { medianOf } from './expected-prices.js';
import { fixtureCopy } from './fixtures.js';

/** One market's 24 h figures as a venue's recorded response writes them, in its quote currency. */
export interface RecordedMarket {
  readonly venue: string;
  readonly quote: 'USD' | 'USDT' | 'USDC';
  readonly last: number;
  readonly open?: number;
  readonly high?: number;
  readonly low?: number;
  readonly volume?: number;
  readonly quoteVolume?: number;
}

type Rows = Record<string, string>[];
const num = Number;

/**
 * Every recorded market of `symbol` with its rolling 24 h figures, read straight from the
 * fixtures (not through the service's parsers), as docs/venues.md says each venue reports them.
 */
export function recordedMarkets(symbol: string): RecordedMarket[] {
  const markets: RecordedMarket[] = [];
  const coinbase = fixtureCopy<{ products: Rows }>('coinbase').products.find(
    (row) => row.product_id === `${symbol}-USD`,
  );
  if (coinbase !== undefined) {
    const last = num(coinbase.price);
    markets.push({
      venue: 'coinbase',
      quote: 'USD',
      last,
      open: last / (1 + num(coinbase.price_percentage_change_24h) / 100),
      volume: num(coinbase.volume_24h),
      quoteVolume: num(coinbase.approximate_quote_24h_volume),
    });
  }
  const pairs = fixtureCopy<{ result: Record<string, { wsname: string }> }>('kraken-assetpairs');
  const krakenBase = symbol === 'BTC' ? 'XBT' : symbol;
  const key = Object.keys(pairs.result).find(
    (name) => pairs.result[name]?.wsname === `${krakenBase}/USD`,
  );
  const kraken = fixtureCopy<{ result: Record<string, Record<string, string[]>> }>('kraken-ticker')
    .result[key ?? ''];
  if (kraken !== undefined) {
    markets.push({
      venue: 'kraken',
      quote: 'USD',
      last: num(kraken.c?.[0]),
      high: num(kraken.h?.[1]),
      low: num(kraken.l?.[1]),
      volume: num(kraken.v?.[1]),
      quoteVolume: num(kraken.v?.[1]) * num(kraken.p?.[1]),
    });
  }
  const bitstamp = fixtureCopy<Rows>('bitstamp').find((row) => row.pair === `${symbol}/USD`);
  if (bitstamp !== undefined) {
    markets.push({
      venue: 'bitstamp',
      quote: 'USD',
      last: num(bitstamp.last),
      open: num(bitstamp.open_24),
      high: num(bitstamp.high),
      low: num(bitstamp.low),
      volume: num(bitstamp.volume),
      quoteVolume: num(bitstamp.volume) * num(bitstamp.vwap),
    });
  }
  const gemini = fixtureCopy<Rows>('gemini').find((row) => row.pair === `${symbol}USD`);
  if (gemini !== undefined) {
    const last = num(gemini.price);
    markets.push({
      venue: 'gemini',
      quote: 'USD',
      last,
      open: last / (1 + num(gemini.percentChange24h)),
    });
  }
  for (const quote of ['USDT', 'USDC'] as const) {
    const binance = fixtureCopy<Rows>('binance-24hr').find((row) => row.symbol === symbol + quote);
    if (binance !== undefined) {
      markets.push({
        venue: 'binance',
        quote,
        last: num(binance.lastPrice),
        open: num(binance.openPrice),
        high: num(binance.highPrice),
        low: num(binance.lowPrice),
        volume: num(binance.volume),
        quoteVolume: num(binance.quoteVolume),
      });
    }
    const bybit = fixtureCopy<{ result: { list: Rows } }>('bybit').result.list.find(
      (row) => row.symbol === symbol + quote,
    );
    if (bybit !== undefined) {
      markets.push({
        venue: 'bybit',
        quote,
        last: num(bybit.lastPrice),
        open: num(bybit.prevPrice24h),
        high: num(bybit.highPrice24h),
        low: num(bybit.lowPrice24h),
        volume: num(bybit.volume24h),
        quoteVolume: num(bybit.turnover24h),
      });
    }
  }
  for (const quote of ['USD', 'USDT', 'USDC'] as const) {
    const okx = fixtureCopy<{ data: Rows }>('okx').data.find(
      (row) => row.instId === `${symbol}-${quote}`,
    );
    if (okx !== undefined) {
      markets.push({
        venue: 'okx',
        quote,
        last: num(okx.last),
        open: num(okx.open24h),
        high: num(okx.high24h),
        low: num(okx.low24h),
        volume: num(okx.vol24h),
        quoteVolume: num(okx.volCcy24h),
      });
    }
    const kucoin = fixtureCopy<{ data: { ticker: Rows } }>('kucoin').data.ticker.find(
      (row) => row.symbolName === `${symbol}-${quote}`,
    );
    if (kucoin !== undefined) {
      markets.push({
        venue: 'kucoin',
        quote,
        last: num(kucoin.last),
        open: num(kucoin.last) - num(kucoin.changePrice),
        high: num(kucoin.high),
        low: num(kucoin.low),
        volume: num(kucoin.vol),
        quoteVolume: num(kucoin.volValue),
      });
    }
  }
  return markets;
}

/** The recorded CoinGecko market cap of a CoinGecko id. */
export function recordedMarketCap(id: string): number {
  const caps = fixtureCopy<Record<string, { usd_market_cap: number }>>('coingecko-market-caps');
  const cap = caps[id]?.usd_market_cap;
  if (cap === undefined) throw new Error(`no recorded market cap for ${id}`);
  return cap;
}

/** The 24-hour figures docs/pricing.md describes, for the recorded venues. */
export interface ExpectedFigures {
  readonly venues: number;
  readonly open24h: number;
  readonly high24h: number;
  readonly low24h: number;
  readonly volume24h: number;
  readonly volumeUsd24h: number;
}

/** docs/pricing.md's outlier cut: within max(5 × 1.4826 × MAD, 0.5 %) of the lower median. */
function agreeing(values: readonly number[]): number[] {
  const sorted = [...values].sort((a, b) => a - b);
  const centre = sorted[Math.ceil(sorted.length / 2) - 1]!;
  const mad = medianOf(values.map((value) => Math.abs(value - centre)));
  const tolerance = Math.min(Math.max(5 * 1.4826 * mad, 0.005 * centre), 0.02 * centre);
  return values.filter((value) => Math.abs(value - centre) <= tolerance);
}

/**
 * What docs/pricing.md says `symbol`'s figures are, computed here from the recorded responses of
 * `venues` (every recorded venue by default) at the given stablecoin rates, not by the service's code.
 */
export function expectedFigures(
  symbol: string,
  rates: { USDT: number; USDC: number },
  venues?: readonly string[],
): ExpectedFigures {
  const rate = (market: RecordedMarket): number =>
    market.quote === 'USD' ? 1 : rates[market.quote];
  const byVenue = new Map<string, RecordedMarket[]>();
  for (const market of recordedMarkets(symbol)) {
    if (venues !== undefined && !venues.includes(market.venue)) continue;
    byVenue.set(market.venue, [...(byVenue.get(market.venue) ?? []), market]);
  }
  const figures = [...byVenue.values()].map((markets) => {
    const usd = (pick: (market: RecordedMarket) => number | undefined): number[] =>
      markets.flatMap((market) => {
        const value = pick(market);
        return value === undefined ? [] : [value * rate(market)];
      });
    const middle = (values: number[]): number | undefined =>
      values.length === 0 ? undefined : medianOf(values);
    const sum = (values: number[]): number | undefined =>
      values.length === 0 ? undefined : values.reduce((total, value) => total + value, 0);
    return {
      last: medianOf(usd((market) => market.last)),
      open: middle(usd((market) => market.open)),
      high: middle(usd((market) => market.high)),
      low: middle(usd((market) => market.low)),
      volume: sum(
        markets.flatMap((market) => (market.volume === undefined ? [] : [market.volume])),
      ),
      volumeUsd: sum(usd((market) => market.quoteVolume)),
    };
  });
  // the recorded venues agree on their last prices: every one contributes
  if (agreeing(figures.map((venue) => venue.last)).length !== figures.length) {
    throw new Error(`the recorded venues of ${symbol} do not all agree`);
  }
  const robust = (values: (number | undefined)[]): number =>
    medianOf(agreeing(values.filter((value): value is number => value !== undefined)));
  const total = (values: (number | undefined)[]): number =>
    values.reduce<number>((sum, value) => sum + (value ?? 0), 0);
  return {
    venues: figures.length,
    open24h: robust(figures.map((venue) => venue.open)),
    high24h: robust(figures.map((venue) => venue.high)),
    low24h: robust(figures.map((venue) => venue.low)),
    volume24h: total(figures.map((venue) => venue.volume)),
    volumeUsd24h: total(figures.map((venue) => venue.volumeUsd)),
  };
}
