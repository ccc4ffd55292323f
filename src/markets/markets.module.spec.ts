import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadFixture } from '../../test/support/fixtures.js';
import { loadConfig } from '../app-config.js';
import { coingeckoPricePath } from './coingecko.source.js';
import { GEMINI_PRICEFEED_PATH } from './gemini.source.js';
import { createPriceSources } from './markets.module.js';
import { BUILT_IN_VENUES } from './venues.js';

const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

/** A loopback venue answering recorded bodies by path and keeping each request's headers. */
async function recordingVenue(bodies: Record<string, unknown>) {
  const headers = new Map<string, IncomingHttpHeaders>();
  const server: Server = createServer((request, response) => {
    const path = request.url ?? '/';
    headers.set(path, request.headers);
    const body = bodies[path];
    response.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body ?? { message: 'not found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
    });
  return { url, headers, close };
}

describe('createPriceSources', () => {
  it('builds every built-in venue by default, in order, each with its minimum interval', () => {
    const sources = createPriceSources(loadConfig({ X402_PAY_TO: PAY_TO }));
    expect(sources.map((source) => [source.id, source.minIntervalMs])).toEqual(
      BUILT_IN_VENUES.map((venue) => [venue.id, venue.minIntervalMs]),
    );
  });

  it('sends COINGECKO_API_KEY to CoinGecko only, in its x-cg-demo-api-key header', async () => {
    const venue = await recordingVenue({
      [coingeckoPricePath()]: loadFixture('coingecko'),
      [GEMINI_PRICEFEED_PATH]: loadFixture('gemini'),
    });
    try {
      const config = loadConfig({
        X402_PAY_TO: PAY_TO,
        MARKETS: 'gemini,coingecko',
        MARKET_GEMINI_URL: venue.url,
        MARKET_COINGECKO_URL: venue.url,
        COINGECKO_API_KEY: 'CG-demo-key',
      });
      for (const source of createPriceSources(config)) await source.fetchQuotes();
      expect(venue.headers.get(coingeckoPricePath())?.['x-cg-demo-api-key']).toBe('CG-demo-key');
      expect(venue.headers.get(GEMINI_PRICEFEED_PATH)?.['x-cg-demo-api-key']).toBeUndefined();
    } finally {
      await venue.close();
    }
  });

  it('leaves the API key header out when no key is configured', async () => {
    const venue = await recordingVenue({ [coingeckoPricePath()]: loadFixture('coingecko') });
    try {
      const config = loadConfig({
        X402_PAY_TO: PAY_TO,
        MARKETS: 'coingecko',
        PRICE_MIN_SOURCES: '1',
        MARKET_COINGECKO_URL: venue.url,
      });
      const [coingecko] = createPriceSources(config);
      expect(await coingecko?.fetchQuotes()).not.toHaveLength(0);
      expect(venue.headers.get(coingeckoPricePath())).not.toHaveProperty('x-cg-demo-api-key');
    } finally {
      await venue.close();
    }
  });
});
