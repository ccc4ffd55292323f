import {
  httpContext,
  paidRequest,
  presentedPayment,
  rejectionOf,
} from '../../../test/support/payment-doubles.js';
import { v1Header, v2Header } from '../../../test/support/x402-payloads.js';
import { ApiError, ErrorCode } from '../../common/api-error.js';
import { PresentedPaymentGuard, presentedPaymentOf } from './presented-payment.guard.js';

const base64 = (text: string): string => Buffer.from(text).toString('base64');

describe('PresentedPaymentGuard', () => {
  const guard = new PresentedPaymentGuard();

  it.each([
    ['PAYMENT-SIGNATURE', 'not base64 at all!'],
    ['PAYMENT-SIGNATURE', base64('not json')],
    ['PAYMENT-SIGNATURE', base64('[1,2,3]')],
    ['PAYMENT-SIGNATURE', base64('{"x402Version":1}')],
    ['PAYMENT-SIGNATURE', base64('{"x402Version":2,"accepted":"x","payload":{}}')],
    ['PAYMENT-SIGNATURE', 'A'.repeat(12 * 1024 + 4)],
    ['X-PAYMENT', 'junk'],
    ['X-PAYMENT', base64('{"x402Version":2,"scheme":"exact","network":"base","payload":{}}')],
    ['X-PAYMENT', base64('{"x402Version":1,"scheme":"exact"}')],
    ['X-PAYMENT', ' '],
  ])(
    'refuses a %s header that cannot be decoded (%#) with 400 invalid_payment',
    async (name, value) => {
      const error = await rejectionOf(
        Promise.resolve().then(() =>
          guard.canActivate(httpContext(paidRequest({ [name]: value }))),
        ),
      );
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: ErrorCode.InvalidPayment });
      expect((error as ApiError).status).toBe(400);
    },
  );

  it('lets a request without a payment through: PaymentGuard challenges it', () => {
    const request = paidRequest();
    expect(guard.canActivate(httpContext(request))).toBe(true);
    expect(presentedPaymentOf(request)).toBeUndefined();
  });

  it('keeps a decodable v2 payment for PaymentGuard, decoded once', () => {
    const payment = presentedPayment();
    const request = paidRequest(v2Header(payment));
    expect(guard.canActivate(httpContext(request))).toBe(true);
    const kept = presentedPaymentOf(request);
    expect(kept).toEqual({ version: 2, payload: payment });
    // the header is not read again: the same decoded value is handed on
    request.headers['payment-signature'] = 'not base64 at all!';
    expect(presentedPaymentOf(request)).toBe(kept);
  });

  it('keeps a decodable v1 payment, to be paired with what the route offers', () => {
    const payment = presentedPayment();
    const request = paidRequest(v1Header(payment));
    expect(guard.canActivate(httpContext(request))).toBe(true);
    expect(presentedPaymentOf(request)).toEqual({
      version: 1,
      payment: { scheme: 'exact', network: 'base-sepolia', payload: payment.payload },
    });
  });
});
