import Fastify, { type FastifyInstance } from 'fastify';
import { FastifyHttpAdapter } from './fastify-http-adapter.js';

/** What the adapter says about each request the test server routes. */
interface Seen {
  readonly path: string;
  readonly url: string;
}

describe('FastifyHttpAdapter: the resource a request bought', () => {
  let server: FastifyInstance;
  let publicUrl: string | undefined;

  beforeAll(async () => {
    server = Fastify();
    for (const route of ['/v1/ticker/:symbol', '/v1/tickers/:symbols', '/v1/all-tickers']) {
      server.get(route, (request) => {
        const adapter = new FastifyHttpAdapter(request, publicUrl, undefined);
        return { path: adapter.getPath(), url: adapter.getUrl() } satisfies Seen;
      });
    }
    await server.ready();
  });

  afterAll(async () => {
    await server.close();
  });

  async function seen(url: string, base?: string): Promise<Seen> {
    publicUrl = base;
    const response = await server.inject({ method: 'GET', url, headers: { host: 'h.example' } });
    expect(response.statusCode).toBe(200);
    return response.json<Seen>();
  }

  it.each([
    ['/v1/ticker/BTC', '/v1/ticker/BTC'],
    ['/v1/ticker/%42TC', '/v1/ticker/BTC'],
    ['/v1/ticker/%42%54%43?for=x', '/v1/ticker/BTC'],
    ['/v1/tickers/BTC%2CETH', '/v1/tickers/BTC,ETH'],
    ['/v1/tickers/BTC,ETH', '/v1/tickers/BTC,ETH'],
    ['/v1/all-tickers', '/v1/all-tickers'],
  ])('%s is the routed path %s, decoded where it names the same route', async (target, path) => {
    expect((await seen(target)).path).toBe(path);
  });

  it('keeps a character a path segment cannot hold escaped, once', async () => {
    expect((await seen('/v1/ticker/B%2FT%20C%25')).path).toBe('/v1/ticker/B%2FT%20C%25');
  });

  it('names the routed path and the query on PUBLIC_URL', async () => {
    const { url } = await seen('/v1/ticker/%42TC?for=x', 'https://prices.example');
    expect(url).toBe('https://prices.example/v1/ticker/BTC?for=x');
  });

  it('names the routed path on the host the client asked for without PUBLIC_URL', async () => {
    expect((await seen('/v1/ticker/%42TC')).url).toBe('http://h.example/v1/ticker/BTC');
  });
});
