import { fixtureCopy, loadFixture } from '../../test/support/fixtures.js';
import { parseBybitTickers } from './bybit.venue.js';
import { VenueError } from './venue-error.js';

const RECEIVED_AT = 1_795_176_000_000;

interface Tickers {
  time: number;
  result: { list: { symbol: string; lastPrice: string; volume24h: string }[] };
}

describe('parseBybitTickers', () => {
  const body = fixtureCopy<Tickers>('bybit');
  const tickers = body.result.list;
  const quotes = parseBybitTickers(loadFixture('bybit'), RECEIVED_AT);

  it('reads every USDT and USDC symbol, with its quote, and nothing else', () => {
    const expected = tickers.filter((ticker) => /(USDT|USDC)$/.test(ticker.symbol));
    expect(quotes.map((quote) => `${quote.symbol}${quote.quote}`).sort()).toEqual(
      expected.map((ticker) => ticker.symbol).sort(),
    );
  });

  it('takes the last price, the 24 h base volume and the response time', () => {
    const btc = tickers.find((ticker) => ticker.symbol === 'BTCUSDT')!;
    expect(quotes.find((quote) => quote.symbol === 'BTC' && quote.quote === 'USDT')).toEqual({
      symbol: 'BTC',
      quote: 'USDT',
      price: Number(btc.lastPrice),
      volume: Number(btc.volume24h),
      observedAt: body.time,
    });
  });

  it('never dates an observation after its receipt, and stamps an undated body on receipt', () => {
    const list = [{ symbol: 'BTCUSDT', lastPrice: '1' }];
    const future = { retCode: 0, result: { list }, time: RECEIVED_AT + 60_000 };
    const undated = { retCode: 0, result: { list } };
    expect(parseBybitTickers(future, RECEIVED_AT)[0]?.observedAt).toBe(RECEIVED_AT);
    expect(parseBybitTickers(undated, RECEIVED_AT)[0]?.observedAt).toBe(RECEIVED_AT);
  });

  it('skips symbols it cannot read', () => {
    const edited = fixtureCopy<{ result: { list: unknown[] } }>('bybit');
    edited.result.list.push(
      null,
      { symbol: 'AAAUSDT', lastPrice: '' },
      { symbol: 'BBBEUR', lastPrice: '1' },
      { symbol: 'CCCUSDC', lastPrice: '2.5' },
    );
    const parsed = parseBybitTickers(edited, RECEIVED_AT);
    expect(parsed).toHaveLength(quotes.length + 1);
    expect(parsed.find((quote) => quote.symbol === 'CCC')).toMatchObject({
      quote: 'USDC',
      price: 2.5,
      volume: undefined,
    });
  });

  it('reports a Bybit error sent with HTTP 200', () => {
    const run = () => parseBybitTickers({ retCode: 10006, retMsg: 'Too many visits!' }, 0);
    expect(run).toThrow(
      expect.objectContaining({
        kind: 'venue_error',
        message: 'Bybit error 10006: Too many visits!',
      }) as Error,
    );
  });

  it.each([
    [null],
    [[]],
    [{ result: { list: [] } }],
    [{ retCode: 0 }],
    [{ retCode: 0, result: { list: {} } }],
  ])('refuses %j', (bad) => {
    expect(() => parseBybitTickers(bad, RECEIVED_AT)).toThrow(VenueError);
  });
});
