import { isQuoteCurrency, splitBySuffix, splitDashed } from './instrument-names.js';

describe('splitBySuffix', () => {
  it.each([
    ['BTCUSDT', { base: 'BTC', quote: 'USDT' }],
    ['usdcusdt', { base: 'USDC', quote: 'USDT' }],
    ['1INCHUSDC', { base: '1INCH', quote: 'USDC' }],
    ['BTCFDUSD', undefined],
    ['USDT', undefined],
  ])('splits %s on USDT/USDC as %j', (name, expected) => {
    expect(splitBySuffix(name, ['USDT', 'USDC'])).toEqual(expected);
  });

  it('tries the quotes in the order given, so longer look-alikes can come first', () => {
    expect(splitBySuffix('BTCGUSD', ['GUSD', 'USD'])).toEqual({ base: 'BTC', quote: 'GUSD' });
  });
});

describe('splitDashed', () => {
  it.each([
    ['BTC-USDT', { base: 'BTC', quote: 'USDT' }],
    ['eth-usdc', { base: 'ETH', quote: 'USDC' }],
    ['BTC-USDT-SWAP', undefined],
    ['-USDT', undefined],
    ['BTCUSDT', undefined],
  ])('splits %s as %j', (name, expected) => {
    expect(splitDashed(name)).toEqual(expected);
  });
});

describe('isQuoteCurrency', () => {
  it('knows USD and the two stablecoins, nothing else', () => {
    expect(['USD', 'USDT', 'USDC', 'EUR', 'FDUSD'].filter(isQuoteCurrency)).toEqual([
      'USD',
      'USDT',
      'USDC',
    ]);
  });
});
