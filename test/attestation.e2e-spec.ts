import { ExactEvmScheme } from '@x402/evm/exact/client';
import {
  extractReceiptFromResponse,
  isEIP712SignedReceipt,
  verifyReceiptSignatureEIP712,
} from '@x402/extensions/offer-receipt';
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { verifyTypedData } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { PriceSnapshot } from '../src/aggregation/price-snapshot.js';
import { SNAPSHOT_STORE, type SnapshotStore } from '../src/aggregation/snapshot-store.js';
import {
  PRICE_ATTESTATION_HEADER,
  attestationProblem,
  decodePriceAttestation,
  fixedPointPrice,
  priceAttestationTypedData,
  type PricedBody,
} from '../src/attestation/price-attestation.js';
import { requirementFor, startPaidApp, type PaidApp } from './support/paid-app.js';
import { rawRequest, statusOf } from './support/raw-http.js';
import { startApp, type RunningApp } from './support/test-app.js';
import { paymentRequiredOf, signedPayment, v2Header } from './support/x402-payloads.js';

const KEY = generatePrivateKey();
const SIGNER = privateKeyToAccount(KEY).address;
/** No refresh of its own during the suite: the tests decide which snapshot is served. */
const QUIET = { PRICE_REFRESH_MS: '3600000', PRICE_STALE_MS: '7200000' };

const PAID_ROUTES = [
  ['getTicker', '/v1/ticker/BTC'],
  ['getTickers', '/v1/tickers/ETH,BTC,SOL'],
  ['getAllTickers', '/v1/all-tickers'],
] as const;

/** The time an attestation of `symbols` from `snapshot` signs: their oldest input. */
function oldestInputOf(snapshot: PriceSnapshot | undefined, symbols: readonly string[]): bigint {
  const times = symbols.map((symbol) => snapshot?.prices.get(symbol)?.oldestInputAt ?? NaN);
  return BigInt(Math.floor(Math.min(...times)));
}

describe('price attestations (e2e, local chain)', () => {
  let stack: PaidApp;

  beforeAll(async () => {
    stack = await startPaidApp({ env: { ATTESTATION_PRIVATE_KEY: KEY, ...QUIET } });
  }, 120_000);

  afterAll(async () => {
    await stack.close();
  });

  async function buy(path: string): Promise<{ response: Response; body: PricedBody }> {
    const response = await stack.buyer.fetchV2(`${stack.service.url}${path}`);
    expect(response.status).toBe(200);
    return { response, body: (await response.json()) as PricedBody };
  }

  it('publishes the signer, the EIP-712 domain and types, and the fixed-point rule (free)', async () => {
    const response = await stack.service.get('/.well-known/price-attestation');
    expect(response.status).toBe(200);
    expect(response.headers.get(PRICE_ATTESTATION_HEADER)).toBeNull();
    const info = (await response.json()) as Record<string, unknown>;
    expect(info).toMatchObject({
      enabled: true,
      signer: SIGNER,
      header: 'Price-Attestation',
      domain: { name: 'x402 Price API', version: '1' },
      primaryType: 'PriceAttestation',
      fixedPoint: { decimals: 8 },
    });
    expect(Object.keys(info['types'] as object)).toEqual(['PriceAttestation', 'PricePoint']);
  });

  it.each(PAID_ROUTES)(
    '%s: the answer carries an attestation viem verifies for the signer, prices equal to the body',
    async (_operation, path) => {
      const { response, body } = await buy(path);
      const header = response.headers.get(PRICE_ATTESTATION_HEADER);
      expect(header).not.toBeNull();
      const { message, signature } = decodePriceAttestation(header ?? '');
      await expect(
        verifyTypedData({ address: SIGNER, ...priceAttestationTypedData(message), signature }),
      ).resolves.toBe(true);
      const prices = body.price ?? body.prices ?? {};
      expect(message.prices.map((point) => point.symbol)).toEqual(Object.keys(prices));
      for (const point of message.prices) {
        expect(point.price).toBe(fixedPointPrice(prices[point.symbol] ?? 0));
        expect(point.venues).toBeGreaterThanOrEqual(2);
        expect(point.spreadBps).toBeGreaterThanOrEqual(0);
      }
      // signed at the oldest input behind the answer's prices, at or before the body's time
      const snapshot = await stack.service.app.get<SnapshotStore>(SNAPSHOT_STORE).current();
      expect(message.timestamp).toBe(oldestInputOf(snapshot, Object.keys(prices)));
      expect(message.timestamp).toBeLessThanOrEqual(BigInt(Date.parse(body.timestamp)));
      expect(message.currency).toBe(body.currency);
      await expect(attestationProblem(header, body, SIGNER)).resolves.toBeUndefined();

      // one unit (10^-8 USD) more on the first price, and the attestation no longer proves it
      const [symbol, price] = Object.entries(prices)[0] ?? ['', 0];
      const altered = { ...prices, [symbol]: Number((price + 1e-8).toFixed(8)) };
      const alteredBody =
        body.price === undefined ? { ...body, prices: altered } : { ...body, price: altered };
      await expect(attestationProblem(header, alteredBody, SIGNER)).resolves.toBe(
        `the price of ${symbol} differs from the body`,
      );
    },
  );

  it('an x402 v1 client’s answer is signed too', async () => {
    const response = await stack.buyer.fetchV1(`${stack.service.url}/v1/ticker/ETH`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as PricedBody;
    await expect(
      attestationProblem(response.headers.get(PRICE_ATTESTATION_HEADER), body, SIGNER),
    ).resolves.toBeUndefined();
  });

  it.each([
    ['an unpaid 402', '/v1/ticker/BTC', 402],
    ['an unpaid 402 for a list', '/v1/tickers/BTC,ETH', 402],
    ['an unknown symbol', '/v1/ticker/NOPE', 404],
    ['a malformed list', '/v1/tickers/BTC', 400],
    ['the free asset list', '/v1/assets', 200],
    ['the OpenAPI document', '/openapi.json', 200],
  ])('%s carries no attestation', async (_what, path, status) => {
    const response = await stack.service.get(path);
    expect(response.status).toBe(status);
    expect(response.headers.get(PRICE_ATTESTATION_HEADER)).toBeNull();
  });

  it('an answer served again under its payment-identifier carries its attestation, nothing charged', async () => {
    const path = '/v1/tickers/BTC,ETH';
    const required = paymentRequiredOf(await stack.service.get(path));
    const client = new x402Client().register('eip155:*', new ExactEvmScheme(stack.buyer.account));
    const payload = await client.createPaymentPayload(required);
    const payment = v2Header({
      ...payload,
      extensions: appendPaymentIdentifierToExtensions(
        structuredClone(required.extensions ?? {}),
        `attested_${Date.now()}_replay`,
      ),
    });
    const first = await stack.service.get(path, { headers: payment });
    expect(first.status).toBe(200);
    const body = (await first.json()) as PricedBody;
    const header = first.headers.get(PRICE_ATTESTATION_HEADER);
    await expect(attestationProblem(header, body, SIGNER)).resolves.toBeUndefined();
    const afterFirst = await stack.balances();

    const again = await stack.service.get(path, { headers: payment });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(body);
    expect(again.headers.get(PRICE_ATTESTATION_HEADER)).toBe(header);
    expect(await stack.balances()).toEqual(afterFirst);
  });

  it('a refused payment (402) carries no attestation', async () => {
    const stranger = privateKeyToAccount(generatePrivateKey()); // holds no USDC
    const pay = wrapFetchWithPayment(
      fetch,
      new x402Client().register('eip155:*', new ExactEvmScheme(stranger)),
    );
    const response = await pay(`${stack.service.url}/v1/ticker/BTC`);
    expect(response.status).toBe(402);
    expect(response.headers.get(PRICE_ATTESTATION_HEADER)).toBeNull();
  });

  it('a client asking for a receipt gets one signed by the same key; others get none', async () => {
    const url = `${stack.service.url}/v1/ticker/BTC`;
    const asking = wrapFetchWithPayment(
      fetch,
      new x402Client()
        .register('eip155:*', new ExactEvmScheme(stack.buyer.account))
        .registerExtension({
          key: 'offer-receipt',
          enrichPaymentPayload: (payload) =>
            Promise.resolve({
              ...payload,
              extensions: { ...payload.extensions, 'offer-receipt': {} },
            }),
        }),
    );
    // a Host and a query of the buyer's choosing are not what it bought
    const response = await asking(`${url}?for=https://other.example/premium`, {
      headers: { host: 'price-api.example/v1/all-tickers?paid=' },
    });
    expect(response.status).toBe(200);
    const settlement = decodePaymentResponseHeader(response.headers.get('PAYMENT-RESPONSE') ?? '');
    const receipt = extractReceiptFromResponse(response);
    if (receipt === undefined || !isEIP712SignedReceipt(receipt)) {
      throw new Error('no EIP-712 receipt in PAYMENT-RESPONSE');
    }
    const { signer, payload } = await verifyReceiptSignatureEIP712(receipt);
    expect(signer).toBe(SIGNER);
    expect(payload).toMatchObject({
      network: 'eip155:84532',
      // no PUBLIC_URL here: the path alone, on the signer's service
      resourceUrl: '/v1/ticker/BTC',
      payer: stack.buyer.account.address,
      transaction: settlement.transaction,
    });
    expect(Math.abs(payload.issuedAt - Date.now() / 1000)).toBeLessThan(60);

    // a percent-encoded path names the route it was routed to
    const encoded = await asking(`${stack.service.url}/v1/ticker/%42TC`);
    expect(encoded.status).toBe(200);
    const encodedReceipt = extractReceiptFromResponse(encoded);
    if (encodedReceipt === undefined || !isEIP712SignedReceipt(encodedReceipt)) {
      throw new Error('no EIP-712 receipt in PAYMENT-RESPONSE');
    }
    const verified = await verifyReceiptSignatureEIP712(encodedReceipt);
    expect(verified.payload.resourceUrl).toBe('/v1/ticker/BTC');

    const plain = await stack.buyer.fetchV2(url);
    expect(plain.status).toBe(200);
    expect(extractReceiptFromResponse(plain)).toBeUndefined();
  });

  it('a target carrying a fragment is refused (400) before any 402, paid or not; nothing charged', async () => {
    const accepted = await requirementFor(stack, '/v1/ticker/BTC');
    const payment = v2Header(await signedPayment(stack.buyer.account, accepted));
    const balance = await stack.chain.usdcBalance(stack.buyer.account.address);
    for (const headers of [{}, payment]) {
      const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
      const answer = await rawRequest(
        stack.service.url,
        `GET /v1/ticker/BTC#pay-to-attacker-0xdead HTTP/1.1\r\nHost: x\r\n${lines.join('')}` +
          'Connection: close\r\n\r\n',
      );
      expect(statusOf(answer)).toBe(400);
      expect(answer).toContain('fragment');
      expect(answer).not.toMatch(/^payment-(response|required):/im);
    }
    expect(await stack.chain.usdcBalance(stack.buyer.account.address)).toBe(balance);
  });

  describe('two instances sharing the key', () => {
    let second: RunningApp;

    beforeAll(async () => {
      second = await startApp({
        ...stack.markets.env(),
        X402_FACILITATOR: 'embedded',
        X402_NETWORK: 'base-sepolia',
        X402_PAY_TO: stack.payTo,
        X402_SETTLER_PRIVATE_KEY: stack.chain.accounts[2]!,
        X402_RPC_URL: stack.chain.rpcUrl,
        X402_RECEIPT_POLL_MS: '20',
        ATTESTATION_PRIVATE_KEY: KEY,
        ...QUIET,
      });
    }, 60_000);

    afterAll(async () => {
      await second.close();
    });

    it('sign the same snapshot identically', async () => {
      const snapshot = await stack.service.app.get<SnapshotStore>(SNAPSHOT_STORE).current();
      if (snapshot === undefined) throw new Error('no snapshot');
      // the second instance's own first round (polled at boot) must not replace the shared one
      const store = second.app.get<SnapshotStore>(SNAPSHOT_STORE);
      await second.refresh();
      for (let attempt = 0; attempt < 20; attempt += 1) {
        await store.publish(snapshot);
        await new Promise((resolve) => setTimeout(resolve, 100));
        if ((await store.current()) === snapshot) break;
      }
      for (const [, path] of PAID_ROUTES) {
        const one = await stack.buyer.fetchV2(`${stack.service.url}${path}`);
        const two = await stack.buyer.fetchV2(`${second.url}${path}`);
        expect([one.status, two.status]).toEqual([200, 200]);
        expect(await two.text()).toBe(await one.text());
        const header = one.headers.get(PRICE_ATTESTATION_HEADER);
        const symbols = decodePriceAttestation(header ?? '').message.prices.map(
          (point) => point.symbol,
        );
        expect(decodePriceAttestation(header ?? '').message.timestamp).toBe(
          oldestInputOf(snapshot, symbols),
        );
        expect(two.headers.get(PRICE_ATTESTATION_HEADER)).toBe(header);
      }
    });
  });
});
