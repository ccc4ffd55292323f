import { parseKrakenAssetPairs } from '../markets/kraken.venue.js';
import { VenueError } from '../markets/venue-error.js';
import { loadFixture } from '../../test/support/fixtures.js';
import {
  parseBinance24hr,
  parseBybitStats,
  parseKucoinStats,
  parseOkxStats,
} from './exchange-stats.js';
import { STATS_VENUES } from './stats-venues.js';
import {
  parseBitstampStats,
  parseCoinbaseStats,
  parseCoingeckoMarketCaps,
  parseGeminiStats,
  parseKrakenStats,
} from './usd-venue-stats.js';
import type { MarketStats } from './venue-stats.js';

const RECEIVED = Date.parse('2026-11-20T12:00:05.000Z');

function market(stats: MarketStats[], symbol: string, quote: string): MarketStats | undefined {
  return stats.find((entry) => entry.symbol === symbol && entry.quote === quote);
}

describe("each venue's 24 h statistics, read from its recorded response", () => {
  it('Binance: rolling open, high, low, base and quote volume per stablecoin market', () => {
    const stats = parseBinance24hr(loadFixture('binance-24hr'), RECEIVED);
    expect(market(stats, 'BTC', 'USDT')).toEqual({
      symbol: 'BTC',
      quote: 'USDT',
      last: 91258.91,
      open: 93063.44,
      high: 94249.6,
      low: 89676.88,
      volume: 761.9738403,
      quoteVolume: 70148994.20607407,
      observedAt: 1795175998774,
    });
    expect(
      stats.some(
        (entry) => entry.symbol === 'ETHBTC' || (entry.symbol === 'ETH' && entry.quote === 'USD'),
      ),
    ).toBe(false);
  });

  it("OKX: open24h (not sodUtc0), vol24h and volCcy24h, dated by each ticker's ts", () => {
    const stats = parseOkxStats(loadFixture('okx'), RECEIVED);
    expect(market(stats, 'BTC', 'USDT')).toEqual({
      symbol: 'BTC',
      quote: 'USDT',
      last: 91189.8,
      open: 92986.2,
      high: 94577.6,
      low: 90558.8,
      volume: 32760.7424576,
      quoteVolume: 3024737660.69637489,
      observedAt: 1795175999358,
    });
    expect(stats.map((entry) => entry.quote)).not.toContain('EUR');
  });

  it('Bybit: prevPrice24h as the open, turnover24h as the quote volume', () => {
    const stats = parseBybitStats(loadFixture('bybit'), RECEIVED);
    expect(market(stats, 'ETH', 'USDC')).toMatchObject({
      last: 3016.1,
      open: 3100.59,
      high: 3130.62,
      low: 2978.76,
      volume: 51412.17552075,
      quoteVolume: 157142238.53678292,
    });
  });

  it('KuCoin: the open is last − changePrice', () => {
    const stats = parseKucoinStats(loadFixture('kucoin'), RECEIVED);
    const btc = market(stats, 'BTC', 'USDT');
    expect(btc?.open).toBeCloseTo(91260.1 + 1681.3, 6);
    expect(btc).toMatchObject({ high: 94492.5, low: 89015.1, volume: 16915.44669271 });
  });

  it('Coinbase: USD products only, the open implied by the 24 h change, no high or low', () => {
    const stats = parseCoinbaseStats(loadFixture('coinbase'), RECEIVED);
    const btc = market(stats, 'BTC', 'USD');
    expect(btc?.open).toBeCloseTo(91212.02 / (1 - 0.0173822709059808), 6);
    expect(btc).toMatchObject({ volume: 17466.60522174, quoteVolume: 1593164344.82 });
    expect(btc?.high).toBeUndefined();
    expect(market(stats, 'BTC', 'USDC')).toBeUndefined();
  });

  it('Kraken: the last 24 h of h, l, v and p; the since-midnight open `o` is not used', () => {
    const pairs = parseKrakenAssetPairs(loadFixture('kraken-assetpairs'));
    const stats = parseKrakenStats(loadFixture('kraken-ticker'), pairs, RECEIVED);
    const btc = market(stats, 'BTC', 'USD');
    expect(btc).toMatchObject({
      last: 91283.2,
      high: 93643.3,
      low: 90016.1,
      volume: 7687.30309708,
    });
    expect(btc?.quoteVolume).toBeCloseTo(7687.30309708 * 91987.8, 3);
    expect(btc?.open).toBeUndefined();
    expect(() => parseKrakenStats({ error: ['EGeneral:Busy'] }, pairs, RECEIVED)).toThrow(
      VenueError,
    );
  });

  it('Bitstamp: open_24 (the price 24 h ago, not the day open), volume × VWAP in USD', () => {
    const stats = parseBitstampStats(loadFixture('bitstamp'), RECEIVED);
    const btc = market(stats, 'BTC', 'USD');
    expect(btc).toMatchObject({ last: 91207, open: 92820, high: 94199, low: 90429 });
    expect(btc?.quoteVolume).toBeCloseTo(1904.11586898 * 92164, 3);
  });

  it('Gemini: only an open, implied by the 24 h change (a fraction)', () => {
    const stats = parseGeminiStats(loadFixture('gemini'), RECEIVED);
    const btc = market(stats, 'BTC', 'USD');
    expect(btc?.open).toBeCloseTo(91246.2 / (1 - 0.0168), 6);
    expect(btc?.volume).toBeUndefined();
  });

  it('CoinGecko: market caps with the price they were made at, no trading figure', () => {
    const stats = parseCoingeckoMarketCaps(loadFixture('coingecko-market-caps'), RECEIVED);
    expect(market(stats, 'BTC', 'USD')).toEqual({
      symbol: 'BTC',
      quote: 'USD',
      last: 91292.34,
      marketCapUsd: 1822394762748,
      observedAt: 1795175988000,
    });
  });

  it('refuse a venue-reported error and a body of the wrong shape', () => {
    expect(() => parseOkxStats({ code: '50011', msg: 'busy' }, RECEIVED)).toThrow(VenueError);
    expect(() => parseBybitStats({ retCode: 10006, retMsg: 'slow' }, RECEIVED)).toThrow(VenueError);
    expect(() => parseKucoinStats({ code: '429000' }, RECEIVED)).toThrow(VenueError);
    expect(() => parseBinance24hr({}, RECEIVED)).toThrow(VenueError);
  });

  it('name a recorded fixture for every request', () => {
    for (const venue of STATS_VENUES) {
      for (const request of venue.requests) expect(loadFixture(request.fixture)).toBeDefined();
    }
  });
});
