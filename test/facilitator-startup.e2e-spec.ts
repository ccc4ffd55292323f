import { StartupError } from '../src/common/startup-error.js';
import { EmbeddedFacilitatorClient } from '../src/payments/facilitator/embedded-facilitator.js';
import { EVERY_EMBEDDED_SCHEME } from './support/embedded-schemes.js';
import { FacilitatorServer } from './support/facilitator-server.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { startApp } from './support/test-app.js';

const PROBLEM = /^application\/problem\+json/;

async function readyWithin(stack: PaidApp, ms: number): Promise<Response> {
  const deadline = Date.now() + ms;
  for (;;) {
    const response = await stack.service.get('/health/ready');
    if (response.status === 200 || Date.now() > deadline) return response;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('a facilitator that cannot be reached at start-up', () => {
  let stack: PaidApp;
  let facilitator: FacilitatorServer;

  beforeAll(async () => {
    stack = await startPaidApp({
      env: { X402_FACILITATOR: 'remote', X402_FACILITATOR_TIMEOUT_MS: '500' },
      beforeApp: async (chain) => {
        facilitator = await FacilitatorServer.start(
          new EmbeddedFacilitatorClient(
            chain.accounts[0]!,
            chain.rpcUrl,
            'eip155:84532',
            EVERY_EMBEDDED_SCHEME,
            {
              receiptMaxWaitMs: 20,
            },
          ),
        );
        // down when the service starts: it closes every connection
        facilitator.mode = 'refuse';
        return { X402_FACILITATOR_URL: facilitator.url };
      },
    });
  });

  afterAll(async () => {
    await stack.close();
    await facilitator.close();
  });

  it('does not stop the service: free routes answer', async () => {
    expect((await stack.service.get('/v1/assets')).status).toBe(200);
    expect((await stack.service.get('/health/live')).status).toBe(200);
  });

  it('answers paid routes 503 facilitator_unavailable with Retry-After, charging nothing', async () => {
    const before = await stack.balances();
    for (const path of ['/v1/ticker/BTC', '/v1/tickers/BTC,ETH', '/v1/all-tickers']) {
      const response = await stack.service.get(path);
      expect(response.status).toBe(503);
      expect(response.headers.get('content-type')).toMatch(PROBLEM);
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await response.json()).toMatchObject({ code: 'facilitator_unavailable' });
    }
    const paying = await stack.buyer.fetchV2(`${stack.service.url}/v1/ticker/BTC`);
    expect(paying.status).toBe(503);
    expect(await stack.balances()).toEqual(before);
  });

  it('is not ready, saying why', async () => {
    const response = await stack.service.get('/health/ready');
    expect(response.status).toBe(503);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await response.json()).toMatchObject({ code: 'facilitator_unavailable' });
  });

  it('keeps asking in the background, becomes ready once it answers, and sells', async () => {
    const askedWhileDown = facilitator.calls.filter((call) => call === 'GET /supported').length;
    expect(askedWhileDown).toBeGreaterThanOrEqual(1);
    facilitator.mode = 'up';
    expect((await readyWithin(stack, 20_000)).status).toBe(200);

    const challenge = await stack.service.get('/v1/ticker/BTC');
    expect(challenge.status).toBe(402);
    const before = await stack.balances();
    const paid = await stack.buyer.fetchV2(`${stack.service.url}/v1/ticker/BTC`);
    expect(paid.status).toBe(200);
    expect(await stack.balances()).toEqual({
      buyer: before.buyer - 2000n,
      payTo: before.payTo + 2000n,
    });
  }, 30_000);
});

describe('a facilitator that answers but does not sell what the routes need', () => {
  it('still stops start-up, saying why', async () => {
    // a facilitator for Base mainnet only; the service sells on Base Sepolia
    const facilitator = await FacilitatorServer.start(
      new EmbeddedFacilitatorClient(
        '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcac478cbed5efcae7',
        'http://127.0.0.1:9',
        'eip155:8453',
        EVERY_EMBEDDED_SCHEME,
      ),
    );
    try {
      const start = startApp({
        X402_FACILITATOR: 'remote',
        X402_FACILITATOR_URL: facilitator.url,
      });
      await expect(start).rejects.toThrow(StartupError);
      await expect(start).rejects.toThrow(/x402 facilitator could not confirm the paid routes/);
      expect(facilitator.calls).toContain('GET /supported');
    } finally {
      await facilitator.close();
    }
  });
});
