import { DEFAULT_CATALOGUE } from '../assets/default-catalogue.js';
import { fixtureCopy, loadFixture } from '../../test/support/fixtures.js';
import { COINGECKO_IDS } from './coingecko-ids.js';
import { coingeckoPricePath, parseCoingeckoPrices } from './coingecko.venue.js';
import { VenueError } from './venue-error.js';

const RECEIVED_AT = 1_795_176_000_000;

type SimplePrices = Record<string, { usd: number; last_updated_at: number }>;

describe('COINGECKO_IDS', () => {
  it('names every catalogue asset, each with its own id', () => {
    for (const symbol of DEFAULT_CATALOGUE) expect(COINGECKO_IDS[symbol]).toBeDefined();
    const ids = Object.values(COINGECKO_IDS);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('asks for exactly the ids the recorded response answers', () => {
    const recorded = Object.keys(fixtureCopy<SimplePrices>('coingecko'));
    expect([...Object.values(COINGECKO_IDS)].sort()).toEqual(recorded.sort());
  });
});

describe('coingeckoPricePath', () => {
  it('asks for USD prices with their update times', () => {
    expect(coingeckoPricePath(['bitcoin', 'usd-coin'])).toBe(
      '/api/v3/simple/price?ids=bitcoin,usd-coin&vs_currencies=usd&include_last_updated_at=true',
    );
  });
});

describe('parseCoingeckoPrices', () => {
  const prices = fixtureCopy<SimplePrices>('coingecko');
  const quotes = parseCoingeckoPrices(loadFixture('coingecko'), RECEIVED_AT);

  it('reads every mapped asset in USD, under our symbol', () => {
    expect(quotes.map((quote) => quote.symbol).sort()).toEqual(Object.keys(COINGECKO_IDS).sort());
    expect(quotes.every((quote) => quote.quote === 'USD')).toBe(true);
  });

  it('takes the price and its update time, without a volume', () => {
    expect(quotes.find((quote) => quote.symbol === 'BTC')).toEqual({
      symbol: 'BTC',
      quote: 'USD',
      price: prices.bitcoin!.usd,
      observedAt: prices.bitcoin!.last_updated_at * 1000,
    });
    expect(quotes.find((quote) => quote.symbol === 'USDC')?.price).toBe(prices['usd-coin']!.usd);
  });

  it('never dates an observation after its receipt, and stamps undated ones on receipt', () => {
    const body = {
      bitcoin: { usd: 1, last_updated_at: RECEIVED_AT / 1000 + 3600 },
      ethereum: { usd: 1 },
    };
    expect(parseCoingeckoPrices(body, RECEIVED_AT).map((quote) => quote.observedAt)).toEqual([
      RECEIVED_AT,
      RECEIVED_AT,
    ]);
  });

  it('skips unknown ids and entries it cannot read', () => {
    const body = fixtureCopy<Record<string, unknown>>('coingecko');
    body['not-a-coin'] = { usd: 1, last_updated_at: 1 };
    body.bitcoin = { usd: -1 };
    body.ethereum = { usd: '3000' };
    body.solana = null;
    body.ripple = {};
    const parsed = parseCoingeckoPrices(body, RECEIVED_AT);
    expect(parsed).toHaveLength(quotes.length - 3);
    expect(parsed.some((quote) => ['BTC', 'SOL', 'XRP'].includes(quote.symbol))).toBe(false);
    expect(parsed.find((quote) => quote.symbol === 'ETH')?.price).toBe(3000);
  });

  it.each([[null], [[]], ['{}']])('refuses a body of the wrong shape: %j', (body) => {
    expect(() => parseCoingeckoPrices(body, RECEIVED_AT)).toThrow(VenueError);
  });
});
