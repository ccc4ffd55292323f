import { pricingVenuesBySymbol, recordedQuotes } from '../../test/support/recorded-quotes.js';
import { DEFAULT_CATALOGUE } from './default-catalogue.js';

describe('DEFAULT_CATALOGUE', () => {
  const venues = pricingVenuesBySymbol(recordedQuotes());
  const quotedByThree = [...venues].filter(([, ids]) => ids.size >= 3).map(([symbol]) => symbol);

  it('holds distinct upper-case symbols, 50 or more', () => {
    expect(DEFAULT_CATALOGUE.length).toBeGreaterThanOrEqual(50);
    expect(new Set(DEFAULT_CATALOGUE).size).toBe(DEFAULT_CATALOGUE.length);
    for (const symbol of DEFAULT_CATALOGUE) expect(symbol).toMatch(/^[A-Z0-9]+$/);
  });

  it('is exactly the assets at least three built-in venues quote', () => {
    expect([...DEFAULT_CATALOGUE].sort()).toEqual(quotedByThree.sort());
  });
});
