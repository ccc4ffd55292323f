import { ShutdownState } from '../src/health/shutdown-state.js';
import { FakeMarkets } from './support/fake-markets.js';
import { FakeStreams } from './support/fake-streams.js';
import { startApp } from './support/test-app.js';
import { startPaidApp, requirementFor, responseJson, type PaidApp } from './support/paid-app.js';
import { parseExposition, sampleValue, type Sample } from './support/prometheus.js';
import { RpcProxy } from './support/rpc-proxy.js';
import { signedPayment, v2Header } from './support/x402-payloads.js';

const TOKEN = 'operator-scrape-token-0123456789';
const TICKER_ROUTE = '/v1/ticker/:symbol';

async function untilStatus(stack: PaidApp, path: string, status: number): Promise<Response> {
  for (const until = Date.now() + 20_000; ;) {
    const response = await stack.service.get(path);
    if (response.status === status || Date.now() > until) return response;
    await response.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('operations: metrics, request ids, readiness by dependency', () => {
  let stack: PaidApp;
  let proxy: RpcProxy;

  const scrape = async (): Promise<Sample[]> => {
    const response = await stack.service.get('/metrics', {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseExposition(await response.text());
  };

  beforeAll(async () => {
    stack = await startPaidApp({
      env: { METRICS_TOKEN: TOKEN },
      beforeApp: async (chain) => {
        proxy = await RpcProxy.start(chain.rpcUrl);
        return { X402_RPC_URL: proxy.url };
      },
    });
  });

  afterAll(async () => {
    await stack.close();
    await proxy.close();
  });

  it('serves /metrics only with the bearer token when METRICS_TOKEN is set', async () => {
    const anonymous = await stack.service.get('/metrics');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    expect(await responseJson(anonymous)).toMatchObject({ code: 'unauthorized' });
    const wrong = await stack.service.get('/metrics', {
      headers: { authorization: `Bearer ${TOKEN}x` },
    });
    expect(wrong.status).toBe(401);
    expect((await scrape()).length).toBeGreaterThan(0);
  });

  it('a paid request raises the revenue metric by its price, and counts the payment', async () => {
    const accepted = await requirementFor(stack, '/v1/ticker/BTC');
    const before = await scrape();
    const revenue = { route: TICKER_ROUTE, scheme: 'exact', asset: accepted.asset };
    const payment = await signedPayment(stack.buyer.account, accepted);
    const paid = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
    expect(paid.status).toBe(200);

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>): number =>
      sampleValue(after, name, labels) - sampleValue(before, name, labels);
    expect(delta('x402_revenue_atomic_total', revenue)).toBe(Number(accepted.amount));
    for (const outcome of ['verified', 'settled']) {
      expect(delta('x402_payments_total', { route: TICKER_ROUTE, outcome })).toBe(1);
    }
    expect(delta('x402_settlement_duration_seconds_count', { outcome: 'settled' })).toBe(1);
    expect(delta('x402_verification_duration_seconds_count', { outcome: 'verified' })).toBe(1);
    expect(
      delta('http_requests_total', { method: 'GET', route: TICKER_ROUTE, status: '200' }),
    ).toBe(1);
  });

  it('counts a challenge and a refusal with its reason, and earns nothing from them', async () => {
    const accepted = await requirementFor(stack, '/v1/ticker/BTC');
    const payment = await signedPayment(stack.buyer.account, accepted);
    expect((await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) })).status).toBe(
      200,
    );
    const before = await scrape();
    expect((await stack.service.get('/v1/ticker/ETH')).status).toBe(402);
    const replay = await stack.service.get('/v1/ticker/BTC', { headers: v2Header(payment) });
    expect(replay.status).toBe(402);
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>): number =>
      sampleValue(after, name, labels) - sampleValue(before, name, labels);
    expect(delta('x402_payments_total', { route: TICKER_ROUTE, outcome: 'challenged' })).toBe(1);
    expect(
      delta('x402_payments_total', {
        route: TICKER_ROUTE,
        outcome: 'refused',
        reason: 'payment_already_used',
      }),
    ).toBe(1);
    expect(delta('x402_revenue_atomic_total', { route: TICKER_ROUTE })).toBe(0);
  });

  it('shows venue health and served-price age', async () => {
    const samples = await scrape();
    const venues = stack.markets.env()['MARKETS']!.split(',');
    for (const venue of venues) {
      expect(sampleValue(samples, 'price_venue_state', { venue, state: 'ok' })).toBe(1);
      expect(sampleValue(samples, 'price_venue_consecutive_failures', { venue })).toBe(0);
      expect(
        sampleValue(samples, 'price_venue_last_success_age_seconds', { venue }),
      ).toBeGreaterThanOrEqual(0);
    }
    const btcAge = samples.find(
      (sample) => sample.name === 'price_served_age_seconds' && sample.labels['symbol'] === 'BTC',
    );
    expect(btcAge?.value).toBeGreaterThanOrEqual(0);
  });

  it("returns the caller's X-Request-Id, or a new one", async () => {
    const given = await stack.service.get('/v1/assets', { headers: { 'x-request-id': 'abc-123' } });
    expect(given.headers.get('x-request-id')).toBe('abc-123');
    const fresh = await stack.service.get('/v1/assets');
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const unsafe = await stack.service.get('/v1/assets', {
      headers: { 'x-request-id': 'a b\u00e9' },
    });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('readiness turns 503 when the chain RPC goes away, and back to 200 when it returns', async () => {
    expect((await untilStatus(stack, '/health/ready', 200)).status).toBe(200);
    proxy.fail('*', { kind: 'silence' });
    try {
      const down = await untilStatus(stack, '/health/ready', 503);
      expect(down.status).toBe(503);
      const body = await responseJson(down);
      expect(body).toMatchObject({ code: 'chain_unavailable' });
      // each network whose chain does not answer is named (here the only one)
      expect(body['detail']).toContain('chain: eip155:84532: eth_blockNumber failed');
      expect(body['detail']).not.toContain(proxy.url);
      expect(sampleValue(await scrape(), 'x402_chain_rpc_up', { network: 'eip155:84532' })).toBe(0);
    } finally {
      proxy.clear();
    }
    expect((await untilStatus(stack, '/health/ready', 200)).status).toBe(200);
    expect(sampleValue(await scrape(), 'x402_chain_rpc_up', { network: 'eip155:84532' })).toBe(1);
  }, 60_000);
});

describe('shutdown', () => {
  it('readiness answers 503 shutting_down from the moment the service starts stopping', async () => {
    const markets = await FakeMarkets.start();
    const service = await startApp(markets.env());
    try {
      await service.refresh();
      service.app.get(ShutdownState).begin();
      const response = await service.get('/health/ready');
      expect(response.status).toBe(503);
      const body = await responseJson(response);
      expect(body).toMatchObject({ code: 'shutting_down' });
      expect(body['detail']).toContain('shutdown: the service is stopping');
    } finally {
      await service.close();
      await markets.close();
    }
  });

  it('closes the venue streams when the app closes', async () => {
    const markets = await FakeMarkets.start({ venues: ['kraken', 'bitstamp'] });
    const streams = await FakeStreams.start(['kraken']);
    const kraken = streams.stream('kraken');
    const service = await startApp({
      ...markets.env(),
      ...streams.env(),
      PRICE_REFRESH_MS: '1000',
    });
    try {
      while (kraken.openConnections === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await service.close();
    }
    for (const until = Date.now() + 5000; kraken.openConnections > 0 && Date.now() < until;)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(kraken.openConnections).toBe(0);
    expect(kraken.connections).toHaveLength(1);
    await streams.close();
    await markets.close();
  });

  it('stops polling the venues when the app closes', async () => {
    const markets = await FakeMarkets.start({ venues: ['kraken', 'bitstamp'] });
    const service = await startApp({ ...markets.env(), PRICE_REFRESH_MS: '250' });
    const asked = (): number =>
      markets.venue('kraken').requests.length + markets.venue('bitstamp').requests.length;
    try {
      while (asked() < 4) await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await service.close();
    }
    const atClose = asked();
    // several polling intervals: a timer left running would have asked again
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(asked()).toBe(atClose);
    await markets.close();
  });
});
