import { fixtureCopy, loadFixture } from '../../test/support/fixtures.js';
import { parseCoinbaseProducts } from './coinbase.venue.js';
import { VenueError } from './venue-error.js';

const RECEIVED_AT = 1_795_176_000_000;

interface Product {
  product_id: string;
  price: string;
  quote_currency_id: string;
  status: string;
  trading_disabled: boolean;
}

describe('parseCoinbaseProducts', () => {
  const products = fixtureCopy<{ products: Product[] }>('coinbase').products;
  const quotes = parseCoinbaseProducts(loadFixture('coinbase'), RECEIVED_AT);

  it('reads every online USD product and nothing else', () => {
    const expected = products.filter(
      (product) =>
        product.quote_currency_id === 'USD' &&
        product.status === 'online' &&
        !product.trading_disabled,
    );
    expect(quotes.map((quote) => quote.symbol).sort()).toEqual(
      expected.map((product) => product.product_id.replace('-USD', '')).sort(),
    );
    expect(quotes.every((quote) => quote.quote === 'USD')).toBe(true);
  });

  it('takes the last price and 24 h volume as numbers, stamped when received', () => {
    expect(quotes.find((quote) => quote.symbol === 'BTC')).toEqual({
      symbol: 'BTC',
      quote: 'USD',
      price: 91212.02,
      volume: expect.any(Number) as number,
      observedAt: RECEIVED_AT,
    });
  });

  it('leaves out USDC aliases, other quotes and delisted products', () => {
    expect(quotes.filter((quote) => quote.symbol === 'BTC')).toHaveLength(1);
    expect(quotes.some((quote) => quote.symbol === 'WBTC')).toBe(false);
  });

  it('skips products it cannot read instead of failing whole', () => {
    const body = fixtureCopy<{ products: unknown[] }>('coinbase');
    body.products.unshift(null, 'x', {
      product_id: 'ZZZ-USD',
      price: 'abc',
      quote_currency_id: 'USD',
      status: 'online',
    });
    body.products.push({
      product_id: 'NEW-USD',
      base_currency_id: 'NEW',
      price: '1.5',
      quote_currency_id: 'USD',
      status: 'online',
    });
    const parsed = parseCoinbaseProducts(body, RECEIVED_AT);
    expect(parsed).toHaveLength(quotes.length + 1);
    expect(parsed.find((quote) => quote.symbol === 'NEW')?.price).toBe(1.5);
  });

  it.each([[null], [[]], [{}], [{ products: 'none' }]])(
    'refuses a body of the wrong shape: %j',
    (body) => {
      expect(() => parseCoinbaseProducts(body, RECEIVED_AT)).toThrow(VenueError);
    },
  );
});
