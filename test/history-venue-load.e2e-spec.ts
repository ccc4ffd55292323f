import { x402Client } from '@x402/core/client';
import type { PaymentPayload } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import { CANDLE_REPLAYS } from './support/fake-candles.js';
import { REPLAYED_VENUES } from './support/fake-markets.js';
import { InFlightGauge } from './support/fake-venue.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { paymentRequiredOf, v2Header } from './support/x402-payloads.js';

const HOUR = 3_600_000;
/** The cap on venue candle calls in flight this suite runs with (HISTORY_VENUE_CALLS). */
const VENUE_CALLS = 8;
/** Venues serving 1h candles, each asked once for a range of a few hours. */
const VENUES_PER_ROUND = 8;
const UNPAID_LIMIT = 3;

const iso = (ms: number): string => new Date(ms).toISOString();

/** A 1h range `hoursAgo` back that no other test of this file asks for: none of it is kept. */
function freshRange(hoursAgo: number): string {
  const start = Date.now() - hoursAgo * HOUR;
  return `/v1/ohlc/BTC?interval=1h&start=${iso(start)}&end=${iso(start + 2 * HOUR)}`;
}

/** A payment header that decodes (so it reaches the resolver) but pays for nothing offered. */
const BOGUS_PAYMENT = {
  'payment-signature': Buffer.from(
    JSON.stringify({ x402Version: 2, accepted: {}, payload: {} }),
  ).toString('base64'),
};

describe('history routes under load: what a request may cost the venues before any 402', () => {
  let stack: PaidApp;
  const isCandlePath = (path: string): boolean =>
    Object.values(CANDLE_REPLAYS).some((replay) => path.startsWith(replay.prefix));

  beforeAll(async () => {
    stack = await startPaidApp({
      env: {
        MARKET_TIMEOUT_MS: '4000',
        HISTORY_VENUE_CALLS: String(VENUE_CALLS),
        RATE_LIMIT_UNPAID: String(UNPAID_LIMIT),
        TRUST_PROXY: '127.0.0.1',
        // prices go stale soon after the venues fail: the last test's resolver 503
        PRICE_REFRESH_MS: '250',
        PRICE_STALE_MS: '1500',
      },
    });
  }, 120_000);

  afterAll(async () => {
    await stack.close();
  });

  /** Candle calls the fake venues have received so far. */
  function candleCalls(): number {
    let calls = 0;
    for (const venue of stack.markets.venues.values()) {
      calls += venue.requests.filter(isCandlePath).length;
    }
    return calls;
  }

  function from(client: string, headers: Record<string, string> = {}): RequestInit {
    return { headers: { ...headers, 'x-forwarded-for': client } };
  }

  it.each([
    ['an X-PAYMENT that is not base64', () => freshRange(130), { 'x-payment': 'junk' }],
    [
      'a PAYMENT-SIGNATURE of another version',
      () => `/v1/price-at/BTC?t=${iso(Date.now() - 131 * HOUR)}`,
      { 'payment-signature': Buffer.from('{"x402Version":1}').toString('base64') },
    ],
    [
      'an oversized PAYMENT-SIGNATURE',
      () => freshRange(134),
      { 'payment-signature': 'A'.repeat(13_000) },
    ],
  ])('%s: 400 invalid_payment before the resolver asks any venue', async (_what, path, junk) => {
    const calls = candleCalls();
    const response = await stack.service.get(path(), from('198.51.100.10', junk));
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(response.headers.get('payment-required')).toBeNull();
    expect(await response.json()).toMatchObject({ status: 400, code: 'invalid_payment' });
    expect(candleCalls()).toBe(calls);
  });

  it('concurrent payments past RATE_LIMIT_UNPAID are refused (429) on arrival, before any venue call', async () => {
    const calls = candleCalls();
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_unused, index) =>
        stack.service.get(freshRange(150 + 3 * index), from('198.51.100.20', BOGUS_PAYMENT)),
      ),
    );
    const statuses = responses.map((response) => response.status);
    // the limit, and the payment for the last 402 it allowed: resolved, then refused (402)
    expect(statuses.filter((status) => status === 429)).toHaveLength(12 - (UNPAID_LIMIT + 1));
    expect(statuses.filter((status) => status !== 429).every((status) => status === 402)).toBe(
      true,
    );
    expect(candleCalls() - calls).toBeLessThanOrEqual((UNPAID_LIMIT + 1) * VENUES_PER_ROUND);
  });

  it(`K concurrent requests for distinct uncached ranges keep at most HISTORY_VENUE_CALLS (${String(VENUE_CALLS)}) venue calls in flight`, async () => {
    const gauge = new InFlightGauge(isCandlePath);
    for (const venue of stack.markets.venues.values()) {
      venue.gauge = gauge;
      venue.delayMs = 200;
    }
    try {
      const before = await stack.balances();
      const requests = 6;
      const responses = await Promise.all(
        Array.from({ length: requests }, (_unused, index) =>
          stack.service.get(freshRange(100 + 3 * index), from(`198.51.100.${String(30 + index)}`)),
        ),
      );
      // every round was asked, none at once with more than the cap
      expect(gauge.peak).toBeGreaterThan(0);
      expect(gauge.peak).toBeLessThanOrEqual(VENUE_CALLS);
      for (const response of responses) {
        if (response.status === 503) {
          // the venues stayed busy past MARKET_TIMEOUT_MS: refused before any 402
          expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
          expect(response.headers.get('payment-required')).toBeNull();
          expect(await response.json()).toMatchObject({ code: 'price_unavailable' });
        } else {
          expect(response.status).toBe(402);
        }
      }
      expect(responses.some((response) => response.status === 402)).toBe(true);
      expect(await stack.balances()).toEqual(before);
    } finally {
      for (const venue of stack.markets.venues.values()) {
        venue.gauge = undefined;
        venue.delayMs = 0;
      }
    }
  });

  /** A payment for `path` as the official client makes it, under payment-identifier `id`. */
  async function identifiedPayment(
    path: string,
    client: string,
    id: string,
  ): Promise<PaymentPayload> {
    const required = paymentRequiredOf(await stack.service.get(path, from(client)));
    const buyer = new x402Client().register('eip155:*', new ExactEvmScheme(stack.buyer.account));
    const payload = await buyer.createPaymentPayload(required);
    const extensions = structuredClone(required.extensions ?? {});
    return { ...payload, extensions: appendPaymentIdentifierToExtensions(extensions, id) };
  }

  // last: the venues stay broken
  it('a payment-identifier retry gets its stored answer while prices are stale (the resolver’s 503)', async () => {
    const client = '198.51.100.40';
    const payment = await identifiedPayment('/v1/ticker/BTC', client, `order_${Date.now()}_stale`);
    const first = await stack.service.get('/v1/ticker/BTC', from(client, v2Header(payment)));
    expect(first.status).toBe(200);
    const body: unknown = await first.json();
    const paid = await stack.balances();

    for (const id of REPLAYED_VENUES) {
      stack.markets.break(id, { kind: 'raw', status: 500, body: 'down' });
    }
    // readiness says when the served prices have gone stale (PRICE_STALE_MS)
    while ((await stack.service.get('/health/ready')).status !== 503) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const stale = await stack.service.get('/v1/ticker/BTC', from('198.51.100.41'));
    expect(stale.status).toBe(503);

    const again = await stack.service.get('/v1/ticker/BTC', from(client, v2Header(payment)));
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(body);
    expect(again.headers.get('payment-response')).toBe(first.headers.get('payment-response'));
    expect(await stack.balances()).toEqual(paid);
  });
});
