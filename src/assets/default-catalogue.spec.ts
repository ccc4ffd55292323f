import { loadFixture } from '../../test/support/fixtures.js';
import { parseBitstampTickers } from '../markets/bitstamp.source.js';
import { parseCoinbaseProducts } from '../markets/coinbase.source.js';
import { parseKrakenAssetPairs, parseKrakenTicker } from '../markets/kraken.source.js';
import { DEFAULT_CATALOGUE } from './default-catalogue.js';

describe('DEFAULT_CATALOGUE', () => {
  const usdQuotes = [
    ...parseCoinbaseProducts(loadFixture('coinbase'), 0),
    ...parseKrakenTicker(
      loadFixture('kraken-ticker'),
      parseKrakenAssetPairs(loadFixture('kraken-assetpairs')),
      0,
    ),
    ...parseBitstampTickers(loadFixture('bitstamp'), 0),
  ];

  it('holds 20 to 40 distinct upper-case symbols', () => {
    expect(DEFAULT_CATALOGUE.length).toBeGreaterThanOrEqual(20);
    expect(DEFAULT_CATALOGUE.length).toBeLessThanOrEqual(40);
    expect(new Set(DEFAULT_CATALOGUE).size).toBe(DEFAULT_CATALOGUE.length);
    for (const symbol of DEFAULT_CATALOGUE) expect(symbol).toMatch(/^[A-Z0-9]+$/);
  });

  it.each(DEFAULT_CATALOGUE)('%s is quoted in USD by at least two default venues', (symbol) => {
    const venues = new Set(
      usdQuotes.filter((quote) => quote.symbol === symbol).map((quote) => quote.source),
    );
    expect(venues.size).toBeGreaterThanOrEqual(2);
  });
});
