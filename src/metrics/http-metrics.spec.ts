import Fastify, { type FastifyInstance } from 'fastify';
import { MethodTable } from '../common/method-table.js';
import { installHttpMetrics } from './http-metrics.js';
import { MetricsService } from './metrics.service.js';

async function count(metrics: MetricsService, labels: Record<string, string>): Promise<number> {
  const json = await metrics.registry.getMetricsAsJSON();
  const family = json.find((metric) => metric.name === 'http_requests_total');
  const sample = family?.values.find((value) =>
    Object.entries(labels).every(([key, wanted]) => value.labels[key] === wanted),
  );
  return sample?.value ?? 0;
}

describe('installHttpMetrics', () => {
  let fastify: FastifyInstance;
  let metrics: MetricsService;

  beforeEach(async () => {
    fastify = Fastify();
    metrics = new MetricsService();
    installHttpMetrics(fastify, metrics);
    // a plugin's route, registered after the hook, is counted too
    await fastify.register((plugin, _options, done) => {
      plugin.get('/v1/ticker/:symbol', () => ({ ok: true }));
      done();
    });
    await fastify.ready();
  });

  afterEach(() => fastify.close());

  it('counts each answer under its route pattern, method and status', async () => {
    await fastify.inject('/v1/ticker/BTC');
    await fastify.inject('/v1/ticker/ETH');
    await fastify.inject({ method: 'HEAD', url: '/v1/ticker/BTC' });
    expect(
      await count(metrics, { method: 'GET', route: '/v1/ticker/:symbol', status: '200' }),
    ).toBe(2);
    expect(
      await count(metrics, { method: 'HEAD', route: '/v1/ticker/:symbol', status: '200' }),
    ).toBe(1);
  });

  it('counts requests that matched no route under one label', async () => {
    await fastify.inject('/nowhere');
    await fastify.inject('/elsewhere/deeper');
    expect(await count(metrics, { method: 'GET', route: 'unmatched', status: '404' })).toBe(2);
    const text = await metrics.registry.metrics();
    expect(text).not.toContain('/nowhere');
    expect(text).toContain(
      'http_request_duration_seconds_count{method="GET",route="unmatched",status="404"} 2',
    );
  });

  it('counts a 405 under the route pattern of its path, not as unmatched', async () => {
    const app = Fastify({ exposeHeadRoutes: true });
    const answered = new MetricsService();
    const methods = new MethodTable(['/v1/ticker/:symbol']);
    installHttpMetrics(app, answered, methods);
    methods.install(app);
    // the exception filter's part: a known path asked with another method is a 405
    app.setNotFoundHandler((request, reply) => {
      void reply.code(methods.allowed(request).length > 0 ? 405 : 404).send();
    });
    app.get('/v1/ticker/:symbol', () => ({ ok: true }));
    app.get('/v1/sources', () => ({ ok: true }));
    app.get('/v1/:anything', () => ({ ok: true }));
    try {
      await app.inject({ method: 'POST', url: '/v1/ticker/BTC' });
      await app.inject({ method: 'HEAD', url: '/v1/ticker/BTC' });
      await app.inject({ method: 'DELETE', url: '/v1/sources?x=1' });
      await app.inject({ method: 'POST', url: '/nowhere' });
      const ticker = { route: '/v1/ticker/:symbol', status: '405' };
      expect(await count(answered, { method: 'POST', ...ticker })).toBe(1);
      expect(await count(answered, { method: 'HEAD', ...ticker })).toBe(1);
      expect(await count(answered, { method: 'DELETE', route: '/v1/sources', status: '405' })).toBe(
        1,
      );
      expect(await count(answered, { method: 'POST', route: 'unmatched', status: '404' })).toBe(1);
    } finally {
      await app.close();
    }
  });
});
