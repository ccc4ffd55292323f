/** A deployment that sells no batch-settlement: its price stream answers 503 before any 402. */
import { FakeMarkets } from './support/fake-markets.js';
import { startApp, type RunningApp } from './support/test-app.js';

describe('paid price streams where batch-settlement is not sold', () => {
  let markets: FakeMarkets;
  let app: RunningApp;

  beforeAll(async () => {
    markets = await FakeMarkets.start();
    app = await startApp({ ...markets.env(), X402_SCHEMES: 'exact' });
    await app.refresh();
  });

  afterAll(async () => {
    await app.close();
    await markets.close();
  });

  it('answers 503 streams_unavailable before any 402, and still checks the symbols first', async () => {
    const answer = await app.get('/v1/stream/BTC');
    expect(answer.status).toBe(503);
    expect(answer.headers.get('payment-required')).toBeNull();
    expect(await answer.json()).toMatchObject({ code: 'streams_unavailable' });
    expect((await app.get('/v1/stream/NOPE1')).status).toBe(404);
  });
});
