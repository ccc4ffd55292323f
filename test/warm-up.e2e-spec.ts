import { jest } from '@jest/globals';
import { Server } from 'node:net';
import { FrontDoor } from '../src/common/front-door.js';
import { MetricsService } from '../src/metrics/metrics.service.js';
import { parseExposition, sampleValue } from './support/prometheus.js';
import { startApp, type RunningApp } from './support/test-app.js';

/** The app's count of asset-list 200s, read from its registry (a scrape would be rate limited). */
async function assetListAnswers(app: RunningApp): Promise<number> {
  const registry = app.app.get(MetricsService).registry;
  return sampleValue(parseExposition(await registry.metrics()), 'http_requests_total', {
    route: '/v1/assets',
    status: '200',
  });
}

/**
 * HTTP_WARM_UP_REQUESTS: the app answers that many asset-list requests on a private loopback
 * server before its port opens (FrontDoor.warmUp), so that Node's response path is optimized
 * before any client arrives. Clients must not notice: nothing of it is rate limited or counted.
 */
describe('the start-up warm-up', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('answers every warm-up request before the port opens, counted in neither the rate limit nor the metrics', async () => {
    const events: string[] = [];
    const warmUp = FrontDoor.prototype.warmUp;
    const warmed = jest.spyOn(FrontDoor.prototype, 'warmUp').mockImplementation(async function (
      this: FrontDoor,
      requests,
      timeoutMs,
    ) {
      events.push('warm-up');
      const report = await warmUp.call(this, requests, timeoutMs);
      events.push(`warmed ${String(report.answered)}`);
      return report;
    });
    const listen = Server.prototype.listen;
    jest.spyOn(Server.prototype, 'listen').mockImplementation(function (this: Server, ...args) {
      const [first, second] = args as unknown[];
      const host = typeof first === 'object' ? (first as { host?: string }).host : second;
      events.push(`listen ${String(host)}`);
      return listen.apply(this, args);
    });
    const app = await startApp({ HTTP_WARM_UP_REQUESTS: '500', RATE_LIMIT_FREE: '3' });
    try {
      // the private server listens on loopback during the warm-up; the app's port opens after it
      expect(events).toEqual([
        'warm-up',
        'listen 127.0.0.1',
        'warmed 500',
        `listen ${new URL(app.url).hostname}`,
      ]);
      expect(warmed).toHaveBeenCalledTimes(1);
      expect(await assetListAnswers(app)).toBe(0);
      for (let index = 0; index < 3; index += 1) {
        expect((await app.get('/v1/assets')).status).toBe(200);
      }
      expect((await app.get('/v1/assets')).status).toBe(429);
      expect(await assetListAnswers(app)).toBe(3);
    } finally {
      await app.close();
    }
  });

  it('does not run with HTTP_WARM_UP_REQUESTS=0', async () => {
    const warmed = jest.spyOn(FrontDoor.prototype, 'warmUp');
    const app = await startApp({ HTTP_WARM_UP_REQUESTS: '0' });
    try {
      expect(warmed).not.toHaveBeenCalled();
      expect((await app.get('/v1/assets')).status).toBe(200);
    } finally {
      await app.close();
    }
  });
});
