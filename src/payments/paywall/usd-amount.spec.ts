import { usdToAtomic } from './usd-amount.js';

describe('usdToAtomic', () => {
  it.each([
    ['$0.002', 6, '2000'],
    ['$0.008', 6, '8000'],
    ['$0.010', 6, '10000'],
    ['$1', 6, '1000000'],
    ['$12.5', 6, '12500000'],
    ['$0.002', 18, '2000000000000000'],
  ] as const)('%s with %d decimals is %s', (price, decimals, atomic) => {
    expect(usdToAtomic(price, decimals)).toBe(atomic);
  });

  it.each(['$0.0000001', '$0', '$-1', '$1e-3', '0.002'])('refuses %s', (price) => {
    expect(() => usdToAtomic(price as `$${number}`, 6)).toThrow();
  });
});
