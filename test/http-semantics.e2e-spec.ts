import { startApp, type RunningApp } from './support/test-app.js';

const PROBLEM = /^application\/problem\+json/;

describe('HTTP semantics of the real app', () => {
  let service: RunningApp;

  beforeAll(async () => {
    service = await startApp();
  });

  afterAll(async () => {
    await service.close();
  });

  it('redirects GET / to Swagger UI', async () => {
    const response = await service.get('/', { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/docs');
    const docs = await service.get('/');
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it.each(['/v1/assets', '/health/live', '/openapi.json', '/docs'])(
    'answers HEAD on the free GET route %s like GET, without a body',
    async (path) => {
      const get = await service.get(path);
      const head = await service.get(path, { method: 'HEAD' });
      expect(head.status).toBe(get.status);
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
      expect(await head.text()).toBe('');
    },
  );

  it('answers HEAD on /health/ready with the same 503 as GET before any prices', async () => {
    const head = await service.get('/health/ready', { method: 'HEAD' });
    expect(head.status).toBe(503);
    expect(head.headers.get('retry-after')).toBe('1');
  });

  it.each(['/v1/ticker/BTC', '/v1/tickers/BTC,ETH', '/v1/all-tickers'])(
    'refuses HEAD on the paid route %s with 405 Allow: GET (a HEAD cannot carry a paid body)',
    async (path) => {
      const response = await service.get(path, { method: 'HEAD' });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('GET');
      expect(response.headers.get('payment-required')).toBeNull();
    },
  );

  it.each([
    ['POST', '/v1/assets', 'GET, HEAD'],
    ['DELETE', '/health/live', 'GET, HEAD'],
    ['PUT', '/v1/ticker/BTC', 'GET'],
    ['POST', '/v1/tickers/BTC,ETH', 'GET'],
    ['PATCH', '/v1/all-tickers', 'GET'],
  ])('answers %s %s with a problem+json 405 and Allow: %s', async (method, path, allow) => {
    const response = await service.get(path, { method });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe(allow);
    expect(response.headers.get('content-type')).toMatch(PROBLEM);
    expect(await response.json()).toMatchObject({
      status: 405,
      code: 'method_not_allowed',
      instance: path,
    });
  });

  it.each([
    ['GET', '/v2/ticker/BTC'],
    ['POST', '/v2/ticker/BTC'],
    ['HEAD', '/nowhere'],
  ])('still answers %s %s (no such path) with 404', async (method, path) => {
    const response = await service.get(path, { method });
    expect(response.status).toBe(404);
    expect(response.headers.get('allow')).toBeNull();
  });

  it('still answers a CORS preflight for the payment headers', async () => {
    const response = await service.get('/v1/ticker/BTC', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://wallet.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'payment-signature',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-headers')).toMatch(/PAYMENT-SIGNATURE/i);
  });
});
