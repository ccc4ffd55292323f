import { jest } from '@jest/globals';
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequirements } from '@x402/core/types';
import { responseJson, startPaidApp, type PaidApp } from './support/paid-app.js';
import { paymentRequiredOf, v2Header } from './support/x402-payloads.js';
import { PrepaidCodeModule } from './toy-scheme/prepaid-code.module.js';
import { PrepaidCodeScheme, TOY_SCHEME } from './toy-scheme/toy.scheme.js';

const TICKER = '/v1/ticker/BTC';

describe('a payment scheme added by another module (the toy prepaid-code scheme)', () => {
  let stack: PaidApp;
  let scheme: PrepaidCodeScheme;
  let offer: PaymentRequirements;

  beforeAll(async () => {
    stack = await startPaidApp({
      // the registration line: the scheme's module, given to the app
      features: [PrepaidCodeModule],
      env: { X402_SCHEMES: `exact,${TOY_SCHEME}` },
    });
    scheme = stack.service.app.get(PrepaidCodeScheme);
    const challenge = await stack.service.get(TICKER);
    const found = paymentRequiredOf(challenge).accepts.find((a) => a.scheme === TOY_SCHEME);
    if (found === undefined) throw new Error('the 402 does not offer the toy scheme');
    offer = found;
  });

  afterAll(async () => {
    await stack.close();
  });

  function payWithCode(code: unknown): Promise<Response> {
    return stack.service.get(TICKER, {
      headers: v2Header({ x402Version: 2, accepted: offer, payload: { code } }),
    });
  }

  it('is offered next to exact at the same price; v1 clients are offered exact alone', async () => {
    const challenge = await stack.service.get(TICKER);
    expect(challenge.status).toBe(402);
    const offers = paymentRequiredOf(challenge).accepts;
    expect(offers.map((accepted) => [accepted.scheme, accepted.amount])).toEqual([
      ['exact', '2000'],
      [TOY_SCHEME, '2000'],
    ]);
    const body = await responseJson(challenge);
    expect((body['accepts'] as { scheme: string }[]).map((accepted) => accepted.scheme)).toEqual([
      'exact',
    ]);
  });

  it('sells for a code worth the price, with its receipt, once', async () => {
    scheme.codes.issue('code-1', '2000');
    const paid = await payWithCode('code-1');
    expect(paid.status).toBe(200);
    expect(await paid.json()).toMatchObject({ price: { BTC: expect.any(Number) as number } });
    const receipt = decodePaymentResponseHeader(paid.headers.get('payment-response') ?? '');
    expect(receipt).toMatchObject({ success: true, transaction: 'prepaid:code-1' });

    const replayed = await payWithCode('code-1');
    expect(replayed.status).toBe(402);
    expect(paymentRequiredOf(replayed).error).toContain('code_already_used');
  });

  it('refuses a code worth another amount or never issued with a 402, a malformed one with a 400', async () => {
    scheme.codes.issue('code-cheap', '1000');
    const cheap = await payWithCode('code-cheap');
    expect(cheap.status).toBe(402);
    expect(paymentRequiredOf(cheap).error).toContain('code_worth_another_amount');
    const unknown = await payWithCode('never-issued');
    expect(unknown.status).toBe(402);
    expect(paymentRequiredOf(unknown).error).toContain('unknown_code');
    const malformed = await payWithCode(42);
    expect(malformed.status).toBe(400);
  });

  it('refuses with a 402 naming the reason, nothing sold, a code spent between its verification and its settlement', async () => {
    scheme.codes.issue('code-raced', '2000');
    const verify = scheme.codes.verify.bind(scheme.codes);
    // spent elsewhere right after this request's verification: its settlement is refused
    jest.spyOn(scheme.codes, 'verify').mockImplementationOnce(async (payload, requirements) => {
      const verdict = await verify(payload, requirements);
      scheme.codes.spend('code-raced');
      return verdict;
    });
    const raced = await payWithCode('code-raced');
    expect(raced.status).toBe(402);
    expect(paymentRequiredOf(raced).error).toBe('settlement_failed: code_already_used');
    expect(raced.headers.get('payment-response')).toBeNull();
  });

  it('leaves exact selling as before: the official client pays and exactly the price moves', async () => {
    const before = await stack.balances();
    const response = await stack.buyer.fetchV2(`${stack.service.url}${TICKER}`);
    expect(response.status).toBe(200);
    const after = await stack.balances();
    expect(after.payTo - before.payTo).toBe(2000n);
  });
});
