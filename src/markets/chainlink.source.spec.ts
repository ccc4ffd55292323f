import { chainlinkQuote, feedProblem, type ChainlinkFeed } from './chainlink.source.js';

const RECEIVED_AT = 1_795_176_000_000;
const FEED: ChainlinkFeed = {
  symbol: 'ETH',
  address: '0x71041dddad3595F9CEd3DcCFBe3D1F4b0a16Bb70',
  decimals: 8,
};
const UPDATED_AT = BigInt(RECEIVED_AT / 1000 - 600);

describe('feedProblem', () => {
  it('accepts a feed that describes itself as the symbol in USD', () => {
    expect(feedProblem('ETH', 8, 'ETH / USD')).toBeUndefined();
    expect(feedProblem('LINK', 18, 'LINK / USD')).toBeUndefined();
  });

  it.each([
    ['BTC', 8, 'ETH / USD', 'describes itself as "ETH / USD", not "BTC / USD"'],
    ['ETH', 8, 'ETH / BTC', 'describes itself as "ETH / BTC", not "ETH / USD"'],
    ['ETH', 8, 'ETH/USD', 'describes itself as "ETH/USD", not "ETH / USD"'],
    ['ETH', 77, 'ETH / USD', 'has 77 decimals'],
  ])('refuses %s with %d decimals described as %j', (symbol, decimals, description, problem) => {
    expect(feedProblem(symbol, decimals, description)).toBe(problem);
  });
});

describe('chainlinkQuote', () => {
  it('scales the answer by the feed decimals and dates it by updatedAt', () => {
    expect(
      chainlinkQuote(FEED, { answer: 301_544_000_000n, updatedAt: UPDATED_AT }, RECEIVED_AT),
    ).toEqual({
      source: 'chainlink',
      symbol: 'ETH',
      quote: 'USD',
      price: 3015.44,
      observedAt: Number(UPDATED_AT) * 1000,
    });
    const link = { ...FEED, symbol: 'LINK', decimals: 18 };
    expect(
      chainlinkQuote(link, { answer: 13_287_100_000_000_000_000n, updatedAt: UPDATED_AT }, 0)
        ?.price,
    ).toBe(13.2871);
  });

  it('never dates an observation after its receipt', () => {
    const future = BigInt(RECEIVED_AT / 1000 + 3600);
    expect(chainlinkQuote(FEED, { answer: 1n, updatedAt: future }, RECEIVED_AT)?.observedAt).toBe(
      RECEIVED_AT,
    );
  });

  it.each([
    [0n, UPDATED_AT],
    [-301_544_000_000n, UPDATED_AT],
    [301_544_000_000n, 0n],
  ])('gives no quote for answer %d updated at %d', (answer, updatedAt) => {
    expect(chainlinkQuote(FEED, { answer, updatedAt }, RECEIVED_AT)).toBeUndefined();
  });
});
