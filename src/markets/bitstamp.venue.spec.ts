import { fixtureCopy, loadFixture } from '../../test/support/fixtures.js';
import { parseBitstampTickers } from './bitstamp.venue.js';
import { VenueError } from './venue-error.js';

const RECEIVED_AT = 1_795_176_000_000;

interface Ticker {
  pair: string;
  last: string;
  timestamp: string;
}

describe('parseBitstampTickers', () => {
  const tickers = fixtureCopy<Ticker[]>('bitstamp');
  const quotes = parseBitstampTickers(loadFixture('bitstamp'), RECEIVED_AT);

  it('reads every USD pair and nothing else', () => {
    const expected = tickers.filter((ticker) => ticker.pair.endsWith('/USD'));
    expect(quotes.map((quote) => `${quote.symbol}/USD`).sort()).toEqual(
      expected.map((ticker) => ticker.pair).sort(),
    );
  });

  it('takes the last price and the venue timestamp', () => {
    const btc = tickers.find((ticker) => ticker.pair === 'BTC/USD')!;
    expect(quotes.find((quote) => quote.symbol === 'BTC')).toEqual({
      symbol: 'BTC',
      quote: 'USD',
      price: Number(btc.last),
      volume: expect.any(Number) as number,
      observedAt: Number(btc.timestamp) * 1000,
    });
  });

  it('never dates an observation after its receipt', () => {
    const body = [{ pair: 'BTC/USD', last: '1', timestamp: String(RECEIVED_AT / 1000 + 3600) }];
    expect(parseBitstampTickers(body, RECEIVED_AT)[0]?.observedAt).toBe(RECEIVED_AT);
  });

  it('skips rows it cannot read', () => {
    const body = [
      ...tickers,
      null,
      { pair: 'AAA/USD', last: '-1' },
      { pair: 'BBB/USD', last: '1e3' },
      { pair: '/USD', last: '1' },
      { pair: 42, last: '1' },
      { pair: 'CCC/USD', last: '2.5' },
    ];
    const parsed = parseBitstampTickers(body, RECEIVED_AT);
    expect(parsed).toHaveLength(quotes.length + 1);
    expect(parsed.find((quote) => quote.symbol === 'CCC')?.observedAt).toBe(RECEIVED_AT);
  });

  it.each([[null], [{}], ['[]']])('refuses a body of the wrong shape: %j', (body) => {
    expect(() => parseBitstampTickers(body, RECEIVED_AT)).toThrow(VenueError);
  });
});
