import { CLIENT_DEFAULT_MAX_DEPOSIT, minDepositFor } from './deposit-policy.js';

describe('minDepositFor', () => {
  it('sizes the deposit for 500 calls of the cheapest price, in the token’s decimals', () => {
    expect(minDepositFor(undefined, ['$0.003', '$0.002'], 6)).toBe(1_000_000n);
    expect(minDepositFor(undefined, ['$0.002'], 18)).toBe(10n ** 18n);
  });

  it('stops at what the official client deposits by default', () => {
    expect(CLIENT_DEFAULT_MAX_DEPOSIT).toBe('$5');
    expect(minDepositFor(undefined, ['$0.011'], 6)).toBe(5_000_000n);
  });

  it('takes the operator’s amount as it is, and names none when nothing is sold', () => {
    expect(minDepositFor('$0.75', ['$0.002'], 6)).toBe(750_000n);
    expect(minDepositFor(undefined, [], 6)).toBeUndefined();
  });
});
