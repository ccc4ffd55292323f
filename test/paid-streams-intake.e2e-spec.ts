/**
 * What the stream route and its top-up POST refuse before any work, on a local anvil with the
 * embedded facilitator: a payment header that cannot be decoded (400, as on every paid route),
 * per client address the paid routes' rate limit on requests that buy nothing, and the cap on
 * a client address's open streams (STREAM_MAX_PER_CLIENT), given back when a stream ends.
 */
import { encodePaymentSignatureHeader } from '@x402/core/http';
import { StreamRegistry } from '../src/streams/stream-registry.js';
import { batchBuyer } from './support/batch-channel.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { SseClient } from './support/sse-client.js';
import { paymentRequiredOf } from './support/x402-payloads.js';

const UNPAID = 3;
/** Base64 of text that is not an x402 payload. */
const JUNK = 'bm90IGEgcGF5bWVudA==';

/** A request as the proxy at 127.0.0.1 (TRUST_PROXY) forwards it for `client`. */
function from(client: string, headers: Record<string, string> = {}, method = 'GET'): RequestInit {
  return { method, headers: { ...headers, 'x-forwarded-for': client } };
}

async function expectProblem(response: Response, status: number, code: string): Promise<void> {
  expect(response.status).toBe(status);
  expect(response.headers.get('payment-required')).toBeNull();
  expect(await response.json()).toMatchObject({ status, code });
}

describe('paid price streams: junk payments and rate limits', () => {
  let stack: PaidApp;

  beforeAll(async () => {
    stack = await startPaidApp({
      env: {
        RATE_LIMIT_UNPAID: String(UNPAID),
        RATE_LIMIT_FREE: '1000',
        RATE_LIMIT_WINDOW_MS: '60000',
        TRUST_PROXY: '127.0.0.1',
        STREAM_MAX_PER_CLIENT: '1',
      },
    });
  });

  afterAll(async () => {
    await stack.close();
  });

  it('answers a junk X-PAYMENT or PAYMENT-SIGNATURE on the stream route 400 before the symbols are looked at', async () => {
    for (const [header, client] of [
      ['x-payment', '203.0.113.1'],
      ['payment-signature', '203.0.113.2'],
    ] as const) {
      // NOPE1 is no symbol (404 without a payment): the header is refused first
      await expectProblem(
        await stack.service.get('/v1/stream/NOPE1', from(client, { [header]: JUNK })),
        400,
        'invalid_payment',
      );
    }
    await expectProblem(
      await stack.service.get(
        '/v1/stream/BTC',
        from('203.0.113.3', { 'x-payment': 'not base64!' }),
      ),
      400,
      'invalid_payment',
    );
  });

  it('answers a junk PAYMENT-SIGNATURE on the top-up POST 400 before the stream is looked up', async () => {
    await expectProblem(
      await stack.service.get(
        '/v1/stream/no-such-stream/payment',
        from('203.0.113.4', { 'payment-signature': JUNK }, 'POST'),
      ),
      400,
      'invalid_payment',
    );
  });

  it('limits unpaid stream requests per address: RATE_LIMIT_UNPAID 402s, then 429, payments too', async () => {
    const client = '203.0.113.10';
    for (let index = 0; index < UNPAID; index += 1) {
      expect((await stack.service.get('/v1/stream/BTC', from(client))).status).toBe(402);
    }
    await expectProblem(
      await stack.service.get('/v1/stream/BTC', from(client)),
      429,
      'rate_limited',
    );
    await expectProblem(
      await stack.service.get('/v1/stream/BTC', from(client, { 'payment-signature': JUNK })),
      429,
      'rate_limited',
    );
    // another address is not limited by this one's requests
    expect((await stack.service.get('/v1/stream/BTC', from('203.0.113.11'))).status).toBe(402);
  });

  it('limits top-ups that raise nothing per address, in the paid routes’ bucket', async () => {
    const client = '203.0.113.20';
    for (let index = 0; index < UNPAID; index += 1) {
      const answer = await stack.service.get(
        '/v1/stream/no-such-stream/payment',
        from(client, {}, 'POST'),
      );
      expect(answer.status).toBe(404);
    }
    await expectProblem(
      await stack.service.get('/v1/stream/no-such-stream/payment', from(client, {}, 'POST')),
      429,
      'rate_limited',
    );
    // the same bucket as the stream route's unpaid requests
    await expectProblem(
      await stack.service.get('/v1/stream/BTC', from(client)),
      429,
      'rate_limited',
    );
  });

  it('caps a client address at STREAM_MAX_PER_CLIENT open streams before any payment is checked, and gives the slot back when the stream ends', async () => {
    const client = '203.0.113.30';
    const buyer = await batchBuyer(stack.chain, { depositMultiplier: 10 });
    expect((await buyer.fetch(`${stack.service.url}/v1/ticker/BTC`)).status).toBe(200);
    const [requirement] = paymentRequiredOf(await stack.service.get('/v1/stream/BTC')).accepts;
    if (requirement === undefined) throw new Error('no offer');
    const accepted = { ...requirement, amount: '500' };
    const created = await buyer.scheme.createPaymentPayload(2, accepted);
    const stream = await SseClient.open(`${stack.service.url}/v1/stream/BTC`, {
      'payment-signature': encodePaymentSignatureHeader({
        x402Version: 2,
        accepted,
        payload: created.payload,
      }),
      'x-forwarded-for': client,
    });
    expect(stream.status).toBe(200);
    await stream.until((events) => events.some((event) => event.event === 'open'));
    // no payment needed to be refused: the address's slot is taken
    await expectProblem(
      await stack.service.get('/v1/stream/BTC', from(client)),
      429,
      'stream_limit',
    );
    expect((await stack.service.get('/v1/stream/BTC', from('203.0.113.31'))).status).toBe(402);
    stream.destroy();
    const registry = stack.service.app.get(StreamRegistry);
    for (const deadline = Date.now() + 5000; registry.size > 0 && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(registry.size).toBe(0);
    // the stream was a sale, as a paid answer is: its voucher's count was taken back, and it gave
    // one 402 back (the 429 above), so RATE_LIMIT_UNPAID 402s still come before the limit
    for (let index = 0; index < UNPAID; index += 1) {
      expect((await stack.service.get('/v1/stream/BTC', from(client))).status).toBe(402);
    }
    await expectProblem(
      await stack.service.get('/v1/stream/BTC', from(client)),
      429,
      'rate_limited',
    );
  }, 30_000);
});
