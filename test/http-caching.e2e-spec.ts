import { FakeMarkets } from './support/fake-markets.js';
import { startApp, type RunningApp } from './support/test-app.js';

/**
 * A browser's revalidation. Without a Cache-Control of its own, fetch adds `no-cache` to a
 * conditional request, which the static files' plugin answers with the whole file.
 */
function revalidation(ifNoneMatch: string): Record<string, string> {
  return { 'if-none-match': ifNoneMatch, 'cache-control': 'max-age=0' };
}

/** Free answers that are the same for every client: what a CDN or proxy may keep, and for how long. */
const CACHEABLE: readonly (readonly [string, string])[] = [
  ['/v1/assets', 'public, max-age=60'],
  ['/openapi.json', 'public, max-age=300'],
  ['/openapi.yaml', 'public, max-age=300'],
  ['/docs', 'public, max-age=300'],
  ['/docs/swagger-ui-init.js', 'public, max-age=300'],
  ['/docs/swagger-ui.css', 'public, max-age=3600'],
];

describe('HTTP caching of the free constant answers', () => {
  let markets: FakeMarkets;
  let service: RunningApp;

  beforeAll(async () => {
    markets = await FakeMarkets.start();
    service = await startApp(markets.env());
    await service.refresh();
  });

  afterAll(async () => {
    await service.close();
    await markets.close();
  });

  it.each(CACHEABLE)('%s carries an ETag and Cache-Control %s', async (path, policy) => {
    const response = await service.get(path);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe(policy);
    expect(response.headers.get('etag')).toMatch(/^(W\/)?"[^"]+"$/);
    const again = await service.get(path);
    expect(again.headers.get('etag')).toBe(response.headers.get('etag'));
  });

  it.each(CACHEABLE)(
    '%s answers 304 without a body to If-None-Match naming its tag',
    async (path) => {
      const etag = (await service.get(path)).headers.get('etag')!;
      for (const ifNoneMatch of [etag, `"other", ${etag}`, '*']) {
        const revalidated = await service.get(path, { headers: revalidation(ifNoneMatch) });
        expect(revalidated.status).toBe(304);
        expect(revalidated.headers.get('etag')).toBe(etag);
        expect(await revalidated.text()).toBe('');
      }
    },
  );

  it('answers 200 with the body to an If-None-Match naming another tag', async () => {
    const response = await service.get('/v1/assets', { headers: revalidation('"stale"') });
    expect(response.status).toBe(200);
    const list = (await response.json()) as { count: number };
    expect(list.count).toBeGreaterThan(0);
  });

  it('gives HEAD the same tag as GET, and a 304 too', async () => {
    const etag = (await service.get('/v1/assets')).headers.get('etag')!;
    const head = await service.get('/v1/assets', { method: 'HEAD' });
    expect(head.headers.get('etag')).toBe(etag);
    const revalidated = await service.get('/v1/assets', {
      method: 'HEAD',
      headers: revalidation(etag),
    });
    expect(revalidated.status).toBe(304);
  });

  it.each(['/v1/ticker/BTC', '/v1/tickers/BTC,ETH', '/v1/all-tickers'])(
    'the unpaid 402 of %s is no-store, with no tag to revalidate',
    async (path) => {
      const response = await service.get(path);
      expect(response.status).toBe(402);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('etag')).toBeNull();
    },
  );

  it.each(['/v1/ticker/NOPE', '/health/ready', '/metrics', '/v1/sources'])(
    '%s is not offered to caches',
    async (path) => {
      const response = await service.get(path);
      expect(response.headers.get('etag')).toBeNull();
      expect(response.headers.get('cache-control') ?? '').not.toMatch(/public/);
    },
  );
});
