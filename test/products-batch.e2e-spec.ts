import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { batchBuyer } from './support/batch-channel.js';
import { paymentRequiredOf } from './support/x402-payloads.js';

const HOUR = 3_600_000;

/**
 * Every paid product bought through a batch-settlement channel with the official client: the
 * deposit echoes the 402's extensions (the answer's schema for discovery), so a product whose
 * answer is richer than a ticker's must still fit a payment header.
 */
describe('every paid product, bought through a batch-settlement channel by the official client', () => {
  let stack: PaidApp;

  beforeAll(async () => {
    stack = await startPaidApp();
  }, 120_000);

  afterAll(async () => {
    await stack.close();
  });

  it.each([
    ['/v1/ticker/BTC', '2000'],
    ['/v1/markets/BTC,ETH', '5000'],
    ['/v1/ohlc/BTC?interval=1h', '5000'],
    [`/v1/price-at/BTC?t=${new Date(Date.now() - 2 * HOUR).toISOString()}`, '3000'],
  ])('%s: a channel is opened and the call paid at its price', async (path, amount) => {
    const offer = paymentRequiredOf(await stack.service.get(path)).accepts.find(
      ({ scheme }) => scheme === 'batch-settlement',
    );
    expect(offer?.amount).toBe(amount);
    const buyer = await batchBuyer(stack.chain);
    const response = await buyer.fetch(`${stack.service.url}${path}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('payment-response')).not.toBeNull();
    expect(buyer.sent.length).toBeGreaterThan(0);
  });
});
