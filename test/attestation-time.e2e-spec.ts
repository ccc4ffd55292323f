import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  PRICE_ATTESTATION_HEADER,
  attestationProblem,
  decodePriceAttestation,
  type PricedBody,
} from '../src/attestation/price-attestation.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';

const KEY = generatePrivateKey();
const SIGNER = privateKeyToAccount(KEY).address;
const VENUES = ['coinbase', 'kraken', 'bitstamp'] as const;

describe("an attestation's timestamp bounds the age of every price it signs (e2e)", () => {
  let stack: PaidApp;

  beforeAll(async () => {
    stack = await startPaidApp({
      markets: { venues: VENUES },
      // all three venues must agree; the test runs the rounds, quotes stay usable for a minute
      env: {
        ATTESTATION_PRIVATE_KEY: KEY,
        PRICE_MIN_SOURCES: '3',
        PRICE_REFRESH_MS: '3600000',
        PRICE_STALE_MS: '7200000',
      },
      refresh: false,
    });
  }, 120_000);

  afterAll(async () => {
    await stack.close();
  });

  it('a venue failing from T: an answer bought later is signed at or before its last success', async () => {
    await stack.service.refresh();
    // the failing venue's last quote was observed no later than this
    const lastSuccess = Date.now();
    stack.markets.break('kraken', { kind: 'raw', status: 500, body: 'internal error' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await stack.service.refresh();

    const response = await stack.buyer.fetchV2(`${stack.service.url}/v1/ticker/BTC`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as PricedBody;
    const header = response.headers.get(PRICE_ATTESTATION_HEADER);
    const { message } = decodePriceAttestation(header ?? '');
    // the price still stands on all three venues, kraken's quote among them
    expect(message.prices).toMatchObject([{ symbol: 'BTC', venues: 3 }]);
    // the answer is from the later round; its signed time is that of its oldest input
    expect(Date.parse(body.timestamp)).toBeGreaterThan(lastSuccess);
    expect(message.timestamp).toBeLessThanOrEqual(BigInt(lastSuccess));
    await expect(attestationProblem(header, body, SIGNER)).resolves.toBeUndefined();
  });
});
