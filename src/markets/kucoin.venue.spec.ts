import { fixtureCopy, loadFixture } from '../../test/support/fixtures.js';
import { parseKucoinAllTickers } from './kucoin.venue.js';
import { VenueError } from './venue-error.js';

const RECEIVED_AT = 1_795_176_000_000;

interface AllTickers {
  data: { time: number; ticker: { symbol: string; last: string; vol: string }[] };
}

describe('parseKucoinAllTickers', () => {
  const data = fixtureCopy<AllTickers>('kucoin').data;
  const quotes = parseKucoinAllTickers(loadFixture('kucoin'), RECEIVED_AT);

  it('reads every USDT and USDC pair, with its quote, and nothing else', () => {
    const expected = data.ticker.filter((ticker) => /-(USDT|USDC)$/.test(ticker.symbol));
    expect(quotes.map((quote) => `${quote.symbol}-${quote.quote}`).sort()).toEqual(
      expected.map((ticker) => ticker.symbol).sort(),
    );
  });

  it('takes the last price, the 24 h base volume and the snapshot time', () => {
    const btc = data.ticker.find((ticker) => ticker.symbol === 'BTC-USDT')!;
    expect(quotes.find((quote) => quote.symbol === 'BTC' && quote.quote === 'USDT')).toEqual({
      symbol: 'BTC',
      quote: 'USDT',
      price: Number(btc.last),
      volume: Number(btc.vol),
      observedAt: data.time,
    });
  });

  it('names a renamed asset by its current name', () => {
    const body = {
      code: '200000',
      data: { time: 1, ticker: [{ symbol: 'MATIC-USDT', symbolName: 'POL-USDT', last: '0.2' }] },
    };
    expect(parseKucoinAllTickers(body, RECEIVED_AT)[0]?.symbol).toBe('POL');
  });

  it('never dates an observation after its receipt', () => {
    const body = {
      code: '200000',
      data: { time: RECEIVED_AT + 60_000, ticker: [{ symbol: 'BTC-USDT', last: '1' }] },
    };
    expect(parseKucoinAllTickers(body, RECEIVED_AT)[0]?.observedAt).toBe(RECEIVED_AT);
  });

  it('skips pairs it cannot read', () => {
    const edited = fixtureCopy<{ data: { ticker: unknown[] } }>('kucoin');
    edited.data.ticker.push(
      null,
      { symbol: 'AAA-USDT', last: null },
      { symbol: 'BBB-EUR', last: '1' },
      { symbol: 'CCC-USDC', last: '2.5' },
    );
    const parsed = parseKucoinAllTickers(edited, RECEIVED_AT);
    expect(parsed).toHaveLength(quotes.length + 1);
    expect(parsed.find((quote) => quote.symbol === 'CCC')?.quote).toBe('USDC');
  });

  it('reports a KuCoin error sent with HTTP 200', () => {
    const run = () => parseKucoinAllTickers({ code: '429000', msg: 'Too Many Requests' }, 0);
    expect(run).toThrow(
      expect.objectContaining({
        kind: 'venue_error',
        message: 'KuCoin error 429000: Too Many Requests',
      }) as Error,
    );
  });

  it.each([
    [null],
    [{ data: { ticker: [] } }],
    [{ code: '200000' }],
    [{ code: '200000', data: { ticker: {} } }],
  ])('refuses %j', (body) => {
    expect(() => parseKucoinAllTickers(body, RECEIVED_AT)).toThrow(VenueError);
  });
});
