import fc from 'fast-check';
import { PRICE_SIGNIFICANT_DIGITS, servedPrice } from './price-precision.js';

describe('servedPrice', () => {
  it.each([
    [91260.274809275, 91260.27],
    [3012.456789, 3012.46],
    [142.3712345, 142.371],
    [1.000213456, 1.00021],
    [0.15410199949999998, 0.154102],
    [0.000009841741396949998, 0.00000984174],
    [1234567.891, 1234567.89],
    [999.9999999, 1000],
  ])('serves %p as %p', (aggregated, served) => {
    expect(servedPrice(aggregated)).toBe(served);
  });

  it('never prints floating-point noise', () => {
    expect(JSON.stringify(servedPrice(0.15410199949999998))).toBe('0.154102');
    expect(JSON.stringify(servedPrice(0.000009841741396949998))).toBe('0.00000984174');
  });

  const positive = fc.double({ min: 1e-12, max: 1e9, noNaN: true, noDefaultInfinity: true });

  it('stays within half a unit of its last significant digit', () => {
    fc.assert(
      fc.property(positive, (price) => {
        const relative = Math.abs(servedPrice(price) - price) / price;
        expect(relative).toBeLessThanOrEqual(5 * 10 ** -PRICE_SIGNIFICANT_DIGITS);
      }),
    );
  });

  it('is stable: a served price is served unchanged', () => {
    fc.assert(
      fc.property(positive, (price) => {
        expect(servedPrice(servedPrice(price))).toBe(servedPrice(price));
      }),
    );
  });

  it('keeps whole cents at and above one dollar', () => {
    fc.assert(
      fc.property(fc.double({ min: 1, max: 1e9, noNaN: true }), (price) => {
        expect(Math.abs(servedPrice(price) - price)).toBeLessThanOrEqual(0.005 + 1e-9 * price);
      }),
    );
  });
});
