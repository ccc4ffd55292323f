import { fixtureCopy, loadFixture } from '../../test/support/fixtures.js';
import { parseBinanceTickerPrices } from './binance.venue.js';
import { VenueError } from './venue-error.js';

const RECEIVED_AT = 1_795_176_000_000;

interface TickerPrice {
  symbol: string;
  price: string;
}

describe('parseBinanceTickerPrices', () => {
  const tickers = fixtureCopy<TickerPrice[]>('binance');
  const quotes = parseBinanceTickerPrices(loadFixture('binance'), RECEIVED_AT);

  it('reads every USDT and USDC symbol, with its quote, and nothing else', () => {
    const expected = tickers.filter((ticker) => /(USDT|USDC)$/.test(ticker.symbol));
    expect(quotes.map((quote) => `${quote.symbol}${quote.quote}`).sort()).toEqual(
      expected.map((ticker) => ticker.symbol).sort(),
    );
  });

  it('takes the price, stamped when received, without a volume', () => {
    const btc = tickers.find((ticker) => ticker.symbol === 'BTCUSDT')!;
    expect(quotes.find((quote) => quote.symbol === 'BTC' && quote.quote === 'USDT')).toEqual({
      symbol: 'BTC',
      quote: 'USDT',
      price: Number(btc.price),
      observedAt: RECEIVED_AT,
    });
  });

  it('leaves out FDUSD, fiat and crypto quotes', () => {
    expect(quotes.filter((quote) => quote.symbol === 'BTC').map((quote) => quote.quote)).toEqual([
      'USDT',
      'USDC',
    ]);
    expect(quotes.some((quote) => quote.symbol.endsWith('FD') || quote.symbol === 'ETHBTC')).toBe(
      false,
    );
  });

  it('reads a stablecoin base in its stablecoin quote', () => {
    expect(quotes.find((quote) => quote.symbol === 'USDC')).toMatchObject({
      quote: 'USDT',
      price: 0.999946,
    });
  });

  it('skips rows it cannot read', () => {
    const body = [
      ...tickers,
      null,
      { symbol: 'AAAUSDT', price: '0.00000000' },
      { symbol: 'USDT', price: '1' },
      { symbol: 42, price: '1' },
      { symbol: 'CCCUSDC', price: '2.5' },
    ];
    const parsed = parseBinanceTickerPrices(body, RECEIVED_AT);
    expect(parsed).toHaveLength(quotes.length + 1);
    expect(parsed.find((quote) => quote.symbol === 'CCC')?.quote).toBe('USDC');
  });

  it.each([[null], [{}], [{ code: -1003, msg: 'Too many requests' }]])(
    'refuses a body of the wrong shape: %j',
    (body) => {
      expect(() => parseBinanceTickerPrices(body, RECEIVED_AT)).toThrow(VenueError);
    },
  );
});
