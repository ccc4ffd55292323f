import { MetricsService } from '../src/metrics/metrics.service.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { parseExposition, sampleValue } from './support/prometheus.js';

const CALLS_PER_SECOND = 10;
const RUN_SECONDS = 15;
/** RATE_LIMIT_UNPAID and RATE_LIMIT_WINDOW_MS by default: the window opens at an address's first request. */
const UNPAID_LIMIT = 120;
const WINDOW_MS = 60_000;
/** The run stops here whatever it reached: the test bounds itself within its Jest time-out. */
const GIVE_UP_AFTER_MS = 100_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a client that pays every request, with the default rate limits', () => {
  let stack: PaidApp;

  beforeAll(async () => {
    stack = await startPaidApp();
  });

  afterAll(async () => {
    await stack.close();
  });

  it('buys 10 prices a second for 15 s from one address through @x402/fetch, past RATE_LIMIT_UNPAID within its window, and never gets a 429', async () => {
    const calls = CALLS_PER_SECOND * RUN_SECONDS;
    const statuses: Record<number, number> = {};
    const started = Date.now();
    let inFirstWindow = 0;
    let refreshed = started;
    for (let index = 0; index < calls; index += 1) {
      if (Date.now() - started > GIVE_UP_AFTER_MS) break;
      const due = started + (index * 1000) / CALLS_PER_SECOND;
      if (due > Date.now()) await sleep(due - Date.now());
      // the snapshot must stay fresher than PRICE_STALE_MS (60 s) for the whole run
      if (Date.now() - refreshed > 10_000) {
        await stack.service.refresh();
        refreshed = Date.now();
      }
      const response = await stack.buyer.fetchV2(`${stack.service.url}/v1/ticker/BTC`, {
        signal: AbortSignal.timeout(10_000),
      });
      await response.arrayBuffer();
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      if (Date.now() - started < WINDOW_MS) inFirstWindow += 1;
    }
    expect(statuses).toEqual({ 200: calls });
    // more paid requests in one window than the unpaid limit allows: counted, they would be 429s
    expect(inFirstWindow).toBeGreaterThan(UNPAID_LIMIT);
    // every call was a 402 and a payment: far more 402s than RATE_LIMIT_UNPAID (120) a minute
    const registry = stack.service.app.get(MetricsService).registry;
    const samples = parseExposition(await registry.metrics());
    expect(sampleValue(samples, 'x402_payments_total', { outcome: 'challenged' })).toBe(calls);
  }, 120_000);
});
