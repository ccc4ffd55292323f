import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadFixture } from '../../test/support/fixtures.js';
import { recordedQuotes } from '../../test/support/recorded-quotes.js';
import { loadConfig } from '../app-config.js';
import { COINGECKO } from './coingecko.venue.js';
import { GEMINI } from './gemini.venue.js';
import { createPriceSources } from './markets.module.js';
import type { RawQuote } from './price-source.js';
import { venueRequests } from './venue-definition.js';
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

  it.each(BUILT_IN_VENUES.map((venue) => [venue.id, venue] as const))(
    '%s: asks its defined paths and stamps its id on every quote its parser reads',
    async (id, definition) => {
      const requests = venueRequests(definition);
      const venue = await recordingVenue(
        Object.fromEntries(requests.map((request) => [request.path, loadFixture(request.fixture)])),
      );
      try {
        const config = loadConfig({
          X402_PAY_TO: PAY_TO,
          MARKETS: id,
          PRICE_MIN_SOURCES: '1',
          [`MARKET_${id.toUpperCase()}_URL`]: venue.url,
        });
        const [source, ...others] = createPriceSources(config);
        expect(others).toEqual([]);
        expect(source?.id).toBe(id);
        const quotes = (await source?.fetchQuotes()) ?? [];
        expect([...venue.headers.keys()].sort()).toEqual(
          requests.map((request) => request.path).sort(),
        );
        const instrument = (quote: RawQuote) => [
          quote.source,
          quote.symbol,
          quote.quote,
          quote.price,
        ];
        const recorded = recordedQuotes().filter((quote) => quote.source === id);
        expect(recorded).not.toHaveLength(0);
        expect(quotes.map(instrument)).toEqual(recorded.map(instrument));
      } finally {
        await venue.close();
      }
    },
  );

  it('sends COINGECKO_API_KEY to CoinGecko only, in its x-cg-demo-api-key header', async () => {
    const venue = await recordingVenue({
      [COINGECKO.path]: loadFixture('coingecko'),
      [GEMINI.path]: loadFixture('gemini'),
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
      expect(venue.headers.get(COINGECKO.path)?.['x-cg-demo-api-key']).toBe('CG-demo-key');
      expect(venue.headers.get(GEMINI.path)?.['x-cg-demo-api-key']).toBeUndefined();
    } finally {
      await venue.close();
    }
  });

  it('leaves the API key header out when no key is configured', async () => {
    const venue = await recordingVenue({ [COINGECKO.path]: loadFixture('coingecko') });
    try {
      const config = loadConfig({
        X402_PAY_TO: PAY_TO,
        MARKETS: 'coingecko',
        PRICE_MIN_SOURCES: '1',
        MARKET_COINGECKO_URL: venue.url,
      });
      const [coingecko] = createPriceSources(config);
      expect(await coingecko?.fetchQuotes()).not.toHaveLength(0);
      expect(venue.headers.get(COINGECKO.path)).not.toHaveProperty('x-cg-demo-api-key');
    } finally {
      await venue.close();
    }
  });
});
