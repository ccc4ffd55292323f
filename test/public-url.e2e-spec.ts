import { FakeMarkets } from './support/fake-markets.js';
import { startApp, type RunningApp } from './support/test-app.js';
import { paymentRequiredOf } from './support/x402-payloads.js';

/** What a proxy in front says the client asked for. */
const FORWARDED = { 'x-forwarded-host': 'prices.example.com:8443', 'x-forwarded-proto': 'https' };

/** The resource URL of a 402, as its PAYMENT-REQUIRED header (v2) and its body (v1) name it. */
async function resourceOf(
  app: RunningApp,
  headers: Record<string, string>,
  path = '/v1/ticker/BTC',
): Promise<string[]> {
  const response = await app.get(path, { headers });
  expect(response.status).toBe(402);
  const v2 = paymentRequiredOf(response).resource.url;
  const body = (await response.json()) as { accepts: { resource: string }[] };
  return [v2, ...body.accepts.map((accepted) => accepted.resource)];
}

describe("a 402's resource URL behind a reverse proxy", () => {
  let markets: FakeMarkets;
  const apps: RunningApp[] = [];

  async function serviceWith(env: Record<string, string>): Promise<RunningApp> {
    const app = await startApp({ ...markets.env(), ...env });
    apps.push(app);
    await app.refresh();
    return app;
  }

  beforeAll(async () => {
    markets = await FakeMarkets.start();
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    await markets.close();
  });

  it('is the public URL X-Forwarded-Host and -Proto name, sent by a trusted proxy', async () => {
    const app = await serviceWith({ TRUST_PROXY: '127.0.0.1' });
    for (const url of await resourceOf(app, FORWARDED)) {
      expect(url).toBe('https://prices.example.com:8443/v1/ticker/BTC');
    }
    // without them, what the connection asked for
    for (const url of await resourceOf(app, {})) expect(url).toBe(`${app.url}/v1/ticker/BTC`);
  });

  it('ignores those headers from a sender TRUST_PROXY does not name', async () => {
    const app = await serviceWith({ TRUST_PROXY: '10.0.0.0/8' });
    for (const url of await resourceOf(app, FORWARDED)) {
      expect(url).toBe(`${app.url}/v1/ticker/BTC`);
    }
  });

  it('is PUBLIC_URL when set, whatever the proxy says', async () => {
    const app = await serviceWith({
      TRUST_PROXY: '127.0.0.1',
      PUBLIC_URL: 'https://api.example.com/',
    });
    for (const url of await resourceOf(app, FORWARDED)) {
      expect(url).toBe('https://api.example.com/v1/ticker/BTC');
    }
    // the routed path, decoded where it names the same route
    for (const url of await resourceOf(app, {}, '/v1/ticker/%42TC')) {
      expect(url).toBe('https://api.example.com/v1/ticker/BTC');
    }
  });
});
