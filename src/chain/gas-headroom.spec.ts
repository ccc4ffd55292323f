import { MIN_GAS_HEADROOM, withGasHeadroom } from './gas-headroom.js';

describe('withGasHeadroom', () => {
  it('adds a quarter to a large estimate', () => {
    expect(withGasHeadroom(400_000n)).toBe(500_000n);
    expect(withGasHeadroom(1_000_001n)).toBe(1_250_001n);
  });

  it('adds at least one fresh storage write to a small one', () => {
    expect(withGasHeadroom(60_000n)).toBe(60_000n + MIN_GAS_HEADROOM);
    // a deposit: a quarter of it covers a zero slot written again three calls deep
    expect(withGasHeadroom(143_662n)).toBe(143_662n + 35_915n);
  });
});
