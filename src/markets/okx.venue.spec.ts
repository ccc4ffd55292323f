import { fixtureCopy, loadFixture } from '../../test/support/fixtures.js';
import { parseOkxTickers } from './okx.venue.js';
import { VenueError } from './venue-error.js';

const RECEIVED_AT = 1_795_176_000_000;

interface Ticker {
  instId: string;
  last: string;
  vol24h: string;
  ts: string;
}

describe('parseOkxTickers', () => {
  const tickers = fixtureCopy<{ data: Ticker[] }>('okx').data;
  const quotes = parseOkxTickers(loadFixture('okx'), RECEIVED_AT);

  it('reads every USDT and USDC instrument, with its quote, and nothing else', () => {
    const expected = tickers.filter((ticker) => /-(USDT|USDC)$/.test(ticker.instId));
    expect(quotes.map((quote) => `${quote.symbol}-${quote.quote}`).sort()).toEqual(
      expected.map((ticker) => ticker.instId).sort(),
    );
  });

  it('takes the last price, the 24 h base volume and the ticker time', () => {
    const btc = tickers.find((ticker) => ticker.instId === 'BTC-USDT')!;
    expect(quotes.find((quote) => quote.symbol === 'BTC' && quote.quote === 'USDT')).toEqual({
      symbol: 'BTC',
      quote: 'USDT',
      price: Number(btc.last),
      volume: Number(btc.vol24h),
      observedAt: Number(btc.ts),
    });
  });

  it('never dates an observation after its receipt, and stamps undated ones on receipt', () => {
    const body = {
      code: '0',
      data: [
        { instId: 'BTC-USDT', last: '1', ts: String(RECEIVED_AT + 60_000) },
        { instId: 'ETH-USDC', last: '1' },
      ],
    };
    expect(parseOkxTickers(body, RECEIVED_AT).map((quote) => quote.observedAt)).toEqual([
      RECEIVED_AT,
      RECEIVED_AT,
    ]);
  });

  it('skips instruments it cannot read', () => {
    const body = fixtureCopy<{ data: unknown[] }>('okx');
    body.data.push(
      null,
      { instId: 'AAA-USDT', last: '' },
      { instId: 'BBBUSDT', last: '1' },
      { instId: 'BTC-USDT-SWAP', last: '1' },
      { instId: 'CCC-USDT', last: '2.5', vol24h: 'n/a' },
    );
    const parsed = parseOkxTickers(body, RECEIVED_AT);
    expect(parsed).toHaveLength(quotes.length + 1);
    expect(parsed.find((quote) => quote.symbol === 'CCC')).toMatchObject({
      price: 2.5,
      volume: undefined,
    });
  });

  it('reports an OKX error sent with HTTP 200', () => {
    const run = () => parseOkxTickers({ code: '50011', msg: 'Too Many Requests', data: [] }, 0);
    expect(run).toThrow(
      expect.objectContaining({
        kind: 'venue_error',
        message: 'OKX error 50011: Too Many Requests',
      }) as Error,
    );
  });

  it.each([[null], [[]], [{ data: [] }], [{ code: '0' }], [{ code: '0', data: {} }]])(
    'refuses %j',
    (body) => {
      expect(() => parseOkxTickers(body, RECEIVED_AT)).toThrow(VenueError);
    },
  );
});
