import { fixtureCopy, loadFixture } from '../../test/support/fixtures.js';
import { parseKrakenAssetPairs, parseKrakenTicker } from './kraken.venue.js';
import { VenueError } from './venue-error.js';

const RECEIVED_AT = 1_795_176_000_000;

type Ticker = { c: [string, string]; v: [string, string] };

describe('parseKrakenAssetPairs', () => {
  const pairs = parseKrakenAssetPairs(loadFixture('kraken-assetpairs'));

  it.each([
    ['XXBTZUSD', 'BTC', 'USD'],
    ['XETHZUSD', 'ETH', 'USD'],
    ['XDGUSD', 'DOGE', 'USD'],
    ['SOLUSD', 'SOL', 'USD'],
    ['USDTZUSD', 'USDT', 'USD'],
    ['XXBTZEUR', 'BTC', 'EUR'],
  ])('maps %s to %s/%s', (key, base, quote) => {
    expect(pairs.get(key)).toEqual({ base, quote });
  });

  it('reports a Kraken error sent with HTTP 200', () => {
    const run = () => parseKrakenAssetPairs({ error: ['EGeneral:Temporary lockout'], result: {} });
    expect(run).toThrow(VenueError);
    expect(run).toThrow('Kraken error: EGeneral:Temporary lockout');
  });
});

describe('parseKrakenTicker', () => {
  const pairs = parseKrakenAssetPairs(loadFixture('kraken-assetpairs'));
  const tickers = fixtureCopy<{ result: Record<string, Ticker> }>('kraken-ticker').result;
  const quotes = parseKrakenTicker(loadFixture('kraken-ticker'), pairs, RECEIVED_AT);

  it('reads every USD pair and nothing else', () => {
    const usdKeys = Object.keys(tickers).filter((key) => pairs.get(key)?.quote === 'USD');
    expect(quotes).toHaveLength(usdKeys.length);
    expect(new Set(quotes.map((quote) => quote.symbol)).size).toBe(usdKeys.length);
  });

  it('takes the last trade price and the 24 h volume', () => {
    expect(quotes.find((quote) => quote.symbol === 'BTC')).toEqual({
      symbol: 'BTC',
      quote: 'USD',
      price: Number(tickers.XXBTZUSD!.c[0]),
      volume: Number(tickers.XXBTZUSD!.v[1]),
      observedAt: RECEIVED_AT,
    });
    expect(quotes.find((quote) => quote.symbol === 'DOGE')?.price).toBe(
      Number(tickers.XDGUSD!.c[0]),
    );
  });

  it('skips unknown pairs and unreadable tickers', () => {
    const body = fixtureCopy<{ error: string[]; result: Record<string, unknown> }>('kraken-ticker');
    body.result.NEWCOINUSD = { c: ['1.0', '1'] };
    body.result.XXBTZUSD = { c: ['NaN', '1'] };
    body.result.XETHZUSD = { c: 'oops' };
    const parsed = parseKrakenTicker(body, pairs, RECEIVED_AT);
    expect(parsed).toHaveLength(quotes.length - 2);
    expect(parsed.some((quote) => ['BTC', 'ETH', 'NEWCOIN'].includes(quote.symbol))).toBe(false);
  });

  it.each([
    [null],
    [{ error: [] }],
    [{ error: 'none', result: {} }],
    [{ error: ['EService:Unavailable'], result: {} }],
  ])('refuses %j', (body) => {
    expect(() => parseKrakenTicker(body, pairs, RECEIVED_AT)).toThrow(VenueError);
  });
});
