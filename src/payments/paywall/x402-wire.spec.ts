import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { encodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import {
  MalformedPaymentError,
  decodeHeaderJson,
  encodeHeaderJson,
  decodeV1Payment,
  decodeV2Payment,
  presentedPaymentHeader,
  receiptHeader,
  toV1PaymentRequired,
} from './x402-wire.js';

const accepted: PaymentRequirements = {
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
const base64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64');

describe('x402 wire', () => {
  it('prefers the v2 header when both are present', () => {
    const headers: Record<string, string> = { 'payment-signature': 'v2', 'x-payment': 'v1' };
    expect(presentedPaymentHeader((name) => headers[name])).toEqual({ version: 2, value: 'v2' });
    expect(presentedPaymentHeader((name) => (name === 'x-payment' ? 'v1' : undefined))).toEqual({
      version: 1,
      value: 'v1',
    });
    expect(presentedPaymentHeader(() => undefined)).toBeUndefined();
  });

  it('turns a v1 payment into the v2 payment it stands for', () => {
    const v1 = decodeV1Payment(
      base64({ x402Version: 1, scheme: 'exact', network: 'base-sepolia', payload: schemePayload }),
      [accepted],
    );
    const v2 = decodeV2Payment(base64({ x402Version: 2, accepted, payload: schemePayload }));
    expect(v1).toEqual({ x402Version: 2, accepted, payload: schemePayload });
    expect(v2).toEqual(v1);
  });

  it.each([
    ['empty', ''],
    ['not base64', '%%%'],
    ['not JSON', Buffer.from('hello').toString('base64')],
    ['an array', base64([1])],
    ['the wrong version', base64({ x402Version: 1, accepted, payload: {} })],
    ['missing accepted', base64({ x402Version: 2, payload: {} })],
    ['too long', 'A'.repeat(8193)],
  ])('refuses a v2 header that is %s', (_case, value) => {
    expect(() => decodeV2Payment(value)).toThrow(MalformedPaymentError);
  });

  it.each([
    ['missing fields', base64({ x402Version: 1 })],
    ['another network', base64({ x402Version: 1, scheme: 'exact', network: 'base', payload: {} })],
    [
      'another scheme',
      base64({ x402Version: 1, scheme: 'upto', network: 'base-sepolia', payload: {} }),
    ],
  ])('refuses a v1 header with %s', (_case, value) => {
    expect(() => decodeV1Payment(value, [accepted])).toThrow(MalformedPaymentError);
  });

  it('writes the v1 402 body from the v2 requirements', () => {
    const required: PaymentRequired = {
      x402Version: 2,
      error: 'Payment required',
      resource: {
        url: 'http://127.0.0.1/v1/ticker/BTC',
        description: 'One price',
        mimeType: 'application/json',
      },
      accepts: [accepted],
    };
    expect(toV1PaymentRequired(required, { output: {} }, (scheme) => scheme === 'exact')).toEqual({
      x402Version: 1,
      error: 'Payment required',
      accepts: [
        {
          scheme: 'exact',
          network: 'base-sepolia',
          maxAmountRequired: '2000',
          resource: 'http://127.0.0.1/v1/ticker/BTC',
          description: 'One price',
          mimeType: 'application/json',
          outputSchema: { output: {} },
          payTo: accepted.payTo,
          maxTimeoutSeconds: 60,
          asset: accepted.asset,
          extra: { name: 'USDC', version: '2' },
        },
      ],
    });
  });

  it('answers each client generation in its own receipt header', () => {
    const settlement = {
      success: true,
      transaction: '0xfeed',
      network: 'eip155:84532' as const,
      payer: '0x1',
    };
    const [v2Name] = receiptHeader(2, settlement);
    const [v1Name, v1Value] = receiptHeader(1, settlement);
    expect(v2Name).toBe('PAYMENT-RESPONSE');
    expect(v1Name).toBe('X-PAYMENT-RESPONSE');
    expect(JSON.parse(Buffer.from(v1Value, 'base64').toString('utf8'))).toEqual({
      success: true,
      transaction: '0xfeed',
      network: 'base-sepolia',
      payer: '0x1',
    });
  });
});

describe('encodeHeaderJson', () => {
  it('encodes exactly as the SDK encoders do, non-ASCII included', () => {
    const settlement = {
      success: true,
      transaction: '0xabc',
      network: 'eip155:84532' as const,
      payer: '0x1',
      extensionResponses: { internal: true },
    };
    expect(receiptHeader(2, settlement)[1]).toBe(encodePaymentResponseHeader(settlement));
    const payload = { x402Version: 2, note: 'Zürich — ₿' };
    expect(encodeHeaderJson(payload)).toBe(
      encodePaymentSignatureHeader(
        payload as unknown as Parameters<typeof encodePaymentSignatureHeader>[0],
      ),
    );
  });
});

describe('decodeHeaderJson', () => {
  const header = (length: number): string =>
    encodeHeaderJson({ padding: 'x'.repeat(length) }).slice(0, length);

  it("takes a payment as long as a rich answer's channel deposit (about 9 KiB)", () => {
    const value = encodeHeaderJson({ extensions: { schema: 'x'.repeat(6_800) } });
    expect(value.length).toBeGreaterThan(9_000);
    expect(decodeHeaderJson(value, 'PAYMENT-SIGNATURE')).toHaveProperty('extensions');
  });

  it('refuses a header over 12 KiB before decoding it', () => {
    expect(() => decodeHeaderJson(header(12 * 1024 + 1), 'PAYMENT-SIGNATURE')).toThrow(
      new MalformedPaymentError('PAYMENT-SIGNATURE is longer than 12288 characters'),
    );
  });
});
