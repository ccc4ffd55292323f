import { fixtureCopy, loadFixture } from '../../test/support/fixtures.js';
import { parseGeminiPriceFeed } from './gemini.venue.js';
import { VenueError } from './venue-error.js';

const RECEIVED_AT = 1_795_176_000_000;

interface PriceFeedRow {
  pair: string;
  price: string;
}

describe('parseGeminiPriceFeed', () => {
  const rows = fixtureCopy<PriceFeedRow[]>('gemini');
  const quotes = parseGeminiPriceFeed(loadFixture('gemini'), RECEIVED_AT);

  it('reads every USD pair and nothing else', () => {
    const expected = rows.filter((row) => row.pair.endsWith('USD'));
    expect(quotes.map((quote) => `${quote.symbol}USD`).sort()).toEqual(
      expected.map((row) => row.pair).sort(),
    );
    expect(quotes.every((quote) => quote.quote === 'USD')).toBe(true);
  });

  it('takes the price, stamped when received, without a volume', () => {
    const btc = rows.find((row) => row.pair === 'BTCUSD')!;
    expect(quotes.find((quote) => quote.symbol === 'BTC')).toEqual({
      symbol: 'BTC',
      quote: 'USD',
      price: Number(btc.price),
      observedAt: RECEIVED_AT,
    });
  });

  it('leaves out crypto and other fiat quotes', () => {
    const body = [
      { pair: 'BTCSGD', price: '1' },
      { pair: 'DOGEBTC', price: '1' },
      { pair: 'ETHEUR', price: '1' },
      { pair: 'USD', price: '1' },
    ];
    expect(parseGeminiPriceFeed(body, RECEIVED_AT)).toEqual([]);
  });

  it('strips only USD, so an asset whose name ends in G keeps it', () => {
    expect(quotes.find((quote) => quote.symbol === 'PAXG')?.price).toBe(4074.63);
  });

  it('skips rows it cannot read', () => {
    const body = [
      ...rows,
      null,
      { pair: 'AAAUSD', price: '-1' },
      { pair: 'BBBUSD', price: '1e3' },
      { pair: 42, price: '1' },
      { pair: 'CCCUSD', price: '2.5' },
    ];
    const parsed = parseGeminiPriceFeed(body, RECEIVED_AT);
    expect(parsed).toHaveLength(quotes.length + 1);
    expect(parsed.find((quote) => quote.symbol === 'CCC')?.price).toBe(2.5);
  });

  it.each([[null], [{}], ['[]'], [{ result: 'error', reason: 'RateLimited' }]])(
    'refuses a body of the wrong shape: %j',
    (body) => {
      expect(() => parseGeminiPriceFeed(body, RECEIVED_AT)).toThrow(VenueError);
    },
  );
});
