import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { PaymentRefusedError } from '../../paywall/offered-requirement.js';
import { acceptPayment, paymentExpiry, paymentFingerprint } from './payment-acceptance.js';
import { MalformedPaymentError } from '../../paywall/x402-wire.js';

const offered: PaymentRequirements = {
  scheme: 'exact',
  network: 'eip155:84532',
  asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  amount: '2000',
  payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  maxTimeoutSeconds: 60,
  extra: { name: 'USDC', version: '2' },
};
const authorization = {
  from: '0x4Bf9DBaf6ccd1784C8446f14A53455C8E00A3b0B',
  to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  value: '2000',
  validAfter: '0',
  validBefore: '1795176060',
  nonce: `0x${'ab'.repeat(32)}`,
};
const schemePayload = { signature: `0x${'1f'.repeat(65)}`, authorization };

function presented(
  payload: unknown = schemePayload,
  accepted: unknown = offered,
  rest: Record<string, unknown> = {},
): PaymentPayload {
  return { x402Version: 2, accepted, payload, ...rest } as PaymentPayload;
}

describe('acceptPayment', () => {
  it('accepts exactly an offered requirement and rebuilds the payload from what it checked', () => {
    const accepted = acceptPayment(
      presented(schemePayload, { ...offered, payTo: offered.payTo.toLowerCase() }),
      [offered],
    );
    expect(accepted.requirement).toBe(offered);
    expect(accepted.payload).toEqual({ x402Version: 2, accepted: offered, payload: schemePayload });
    expect(accepted.authorization).toEqual(authorization);
  });

  it('keeps the client extensions (payment-identifier) and nothing else beside the payload', () => {
    const extensions = { 'payment-identifier': { info: { required: false, id: 'x'.repeat(20) } } };
    expect(
      acceptPayment(presented(schemePayload, offered, { extensions }), [offered]).payload,
    ).toEqual({ x402Version: 2, accepted: offered, payload: schemePayload, extensions });
    expect(() =>
      acceptPayment(presented(schemePayload, offered, { payer: 'someone' }), [offered]),
    ).toThrow(MalformedPaymentError);
  });

  it.each([
    [
      'a Permit2 authorization beside a decoy EIP-3009 one',
      { ...schemePayload, permit2Authorization: { from: authorization.from } },
    ],
    ['an unknown key in the payload', { ...schemePayload, extra: 'noise' }],
    [
      'an unknown key in the authorization',
      { ...schemePayload, authorization: { ...authorization, spender: authorization.to } },
    ],
    ['no signature', { authorization }],
    ['a signature that is not hex', { signature: 'abc', authorization }],
    ['a signature shorter than 65 bytes', { signature: `0x${'1f'.repeat(64)}`, authorization }],
    ['no authorization', { signature: schemePayload.signature }],
    ['a short address', { ...schemePayload, authorization: { ...authorization, from: '0x1234' } }],
    ['a negative value', { ...schemePayload, authorization: { ...authorization, value: '-1' } }],
    ['a padded value', { ...schemePayload, authorization: { ...authorization, value: '02000' } }],
    ['a numeric value', { ...schemePayload, authorization: { ...authorization, value: 2000 } }],
    ['a short nonce', { ...schemePayload, authorization: { ...authorization, nonce: '0x01' } }],
    ['a Permit2 payload alone', { signature: schemePayload.signature, permit2Authorization: {} }],
  ])('refuses as malformed a payload with %s', (_case, payload) => {
    expect(() => acceptPayment(presented(payload), [offered])).toThrow(MalformedPaymentError);
  });

  it.each([
    ['another asset', { ...offered, asset: '0x0000000000000000000000000000000000000001' }],
    ['another network', { ...offered, network: 'eip155:8453' }],
    ['another amount', { ...offered, amount: '1' }],
    ['another pay-to', { ...offered, payTo: '0x000000000000000000000000000000000000dEaD' }],
    ['another scheme', { ...offered, scheme: 'upto' }],
    ['a longer time-out', { ...offered, maxTimeoutSeconds: 3600 }],
    ['another token domain', { ...offered, extra: { name: 'USD Coin', version: '2' } }],
    ['an extra field', { ...offered, facilitator: 'mine' }],
    ['no requirement at all', 'exact'],
  ])('refuses with a reason a payment for %s', (_case, accepted) => {
    expect(() => acceptPayment(presented(schemePayload, accepted), [offered])).toThrow(
      PaymentRefusedError,
    );
  });

  it.each([
    ['pays someone else', { to: '0x000000000000000000000000000000000000dEaD' }, /recipient/],
    ['authorizes less than the price', { value: '1999' }, /value/],
    ['authorizes more than the price', { value: '2001' }, /value/],
  ])('refuses with a reason an authorization that %s', (_case, change, reason) => {
    const payload = { ...schemePayload, authorization: { ...authorization, ...change } };
    expect(() => acceptPayment(presented(payload), [offered])).toThrow(reason);
  });

  it('refuses an authorization valid for longer than offered, allowing five minutes of clock skew', () => {
    const nowMs = 1_795_176_000_000;
    const until = (validBefore: string) =>
      presented({ ...schemePayload, authorization: { ...authorization, validBefore } });
    const latest = String(nowMs / 1000 + 60 + 300);
    expect(acceptPayment(until(latest), [offered], nowMs).authorization.validBefore).toBe(latest);
    expect(() => acceptPayment(until(String(Number(latest) + 1)), [offered], nowMs)).toThrow(
      /valid_before: an authorization may stay valid for at most 60 s/,
    );
    expect(() => acceptPayment(until('9'.repeat(70)), [offered], nowMs)).toThrow(
      PaymentRefusedError,
    );
  });
});

describe('paymentFingerprint', () => {
  const fingerprintOf = (payload: typeof schemePayload) =>
    paymentFingerprint(acceptPayment(presented(payload), [offered]));

  it('is what the token makes single-use, whatever the letter case', () => {
    const original = fingerprintOf(schemePayload);
    const recased = {
      signature: schemePayload.signature.toUpperCase().replace('0X', '0x'),
      authorization: { ...authorization, from: authorization.from.toLowerCase() },
    };
    expect(fingerprintOf(recased)).toBe(original);
    const otherNonce = {
      ...schemePayload,
      authorization: { ...authorization, nonce: `0x${'cd'.repeat(32)}` },
    };
    expect(fingerprintOf(otherNonce)).not.toBe(original);
  });

  it('expires a minute after the authorization stops being valid', () => {
    expect(paymentExpiry(acceptPayment(presented(), [offered]))).toBe(1795176060_000 + 60_000);
  });
});
