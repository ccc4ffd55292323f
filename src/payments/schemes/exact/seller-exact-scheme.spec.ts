import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { authorizationTypes } from '@x402/evm';
import { hashTypedData, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { ExactEvmAuthorization } from './payment-acceptance.js';
import { SellerExactScheme, verifiedLocally, type TransferCheck } from './seller-exact-scheme.js';
import {
  transferAuthorizationDigest,
  type TokenDomain,
} from '../../../chain/eip3009-authorization.js';

const NOW_MS = 1_800_000_000_000;
const NOW_S = NOW_MS / 1000;
const ASSET = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const PAY_TO = '0x1111111111111111111111111111111111111111';
const DOMAIN: TokenDomain = {
  name: 'USDC',
  version: '2',
  chainId: 84532,
  verifyingContract: ASSET,
};
const requirements: PaymentRequirements = {
  scheme: 'exact',
  network: 'eip155:84532',
  amount: '2000',
  asset: ASSET,
  payTo: PAY_TO,
  maxTimeoutSeconds: 60,
  extra: { name: 'USDC', version: '2' },
};

const buyer = privateKeyToAccount(generatePrivateKey());

function authorization(overrides: Partial<ExactEvmAuthorization> = {}): ExactEvmAuthorization {
  return {
    from: buyer.address,
    to: PAY_TO,
    value: '2000',
    validAfter: String(NOW_S - 600),
    validBefore: String(NOW_S + 60),
    nonce: `0x${'5a'.repeat(32)}`,
    ...overrides,
  };
}

/** The authorization as viem's EIP-712 typed data. */
function typedData(signed: ExactEvmAuthorization, domain: TokenDomain = DOMAIN) {
  return {
    domain: { ...domain, chainId: BigInt(domain.chainId) },
    types: authorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message: {
      ...signed,
      value: BigInt(signed.value),
      validAfter: BigInt(signed.validAfter),
      validBefore: BigInt(signed.validBefore),
    },
  } as const;
}

async function sign(signed: ExactEvmAuthorization, domain: TokenDomain = DOMAIN): Promise<Hex> {
  return buyer.signTypedData(typedData(signed, domain));
}

function payment(signed: ExactEvmAuthorization, signature: Hex): PaymentPayload {
  return {
    x402Version: 2,
    accepted: requirements,
    payload: { authorization: signed, signature },
  };
}

function verdict(paymentPayload: PaymentPayload, offer: PaymentRequirements = requirements) {
  return verifiedLocally({ paymentPayload, requirements: offer }, NOW_MS);
}

describe('EIP-3009 authorizations checked without the facilitator', () => {
  it("hashes an authorization exactly as viem's EIP-712 typed data does", () => {
    const signed = authorization({ value: '123456789', nonce: `0x${'07'.repeat(32)}` });
    const expected = hashTypedData(typedData(signed));
    expect(Buffer.from(transferAuthorizationDigest(DOMAIN, signed)).toString('hex')).toBe(
      expected.slice(2),
    );
  });

  it("accepts the buyer's own signature on exactly the offer, naming the buyer as payer", async () => {
    const signed = authorization();
    expect(verdict(payment(signed, await sign(signed)))).toEqual({
      skip: true,
      result: { isValid: true, payer: buyer.address },
    });
  });

  it('leaves to the facilitator a signature over other terms, by someone else, or for another token', async () => {
    const signed = authorization();
    const otherTerms = await sign(authorization({ nonce: `0x${'66'.repeat(32)}` }));
    expect(verdict(payment(signed, otherTerms))).toBeUndefined();
    const stranger = privateKeyToAccount(generatePrivateKey());
    expect(verdict(payment(authorization({ from: stranger.address }), await sign(signed)))).toBe(
      undefined,
    );
    const otherToken = await sign(signed, { ...DOMAIN, version: '1' });
    expect(verdict(payment(signed, otherToken))).toBeUndefined();
  });

  it('leaves to the facilitator a smart-wallet or non-canonical signature', async () => {
    const signed = authorization();
    const signature = await sign(signed);
    expect(verdict(payment(signed, `${signature}${'00'.repeat(32)}`))).toBeUndefined();
    const v = Number.parseInt(signature.slice(130), 16) - 27;
    expect(verdict(payment(signed, `0x${signature.slice(2, 130)}0${v}`))).toBeUndefined();
  });

  it('leaves to the facilitator anything that does not pay exactly the offer, now', async () => {
    const cases: Partial<ExactEvmAuthorization>[] = [
      { to: '0x2222222222222222222222222222222222222222' },
      { value: '1999' },
      { value: '2001' },
      { validAfter: String(NOW_S + 1) },
      { validBefore: String(NOW_S + 5) },
    ];
    for (const overrides of cases) {
      const signed = authorization(overrides);
      expect(verdict(payment(signed, await sign(signed)))).toBeUndefined();
    }
    const signed = authorization();
    const signature = await sign(signed);
    expect(
      verdict(payment(signed, signature), { ...requirements, network: 'eip155:8453' }),
    ).toBeUndefined();
    expect(verdict(payment(signed, signature), { ...requirements, extra: {} })).toBeUndefined();
    const otherScheme = { ...requirements, scheme: 'upto' };
    expect(verdict({ ...payment(signed, signature), accepted: otherScheme })).toBeUndefined();
    expect(verdict({ ...payment(signed, signature), payload: { signature } })).toBeUndefined();
  });

  it('accepts only what the token says it would execute now; a refusal or no answer goes to the facilitator', async () => {
    const signed = authorization({
      validAfter: '0',
      validBefore: String(Math.floor(Date.now() / 1000) + 60),
    });
    const paymentPayload = payment(signed, await sign(signed));
    const asked: Parameters<TransferCheck>[] = [];
    const verdicts: unknown[] = [];
    for (const answer of [true, false, undefined]) {
      const scheme = new SellerExactScheme((...args) => {
        asked.push(args);
        return Promise.resolve(answer);
      });
      verdicts.push(
        await scheme.schemeHooks.onBeforeVerify?.({
          paymentPayload,
          requirements,
          declaredExtensions: {},
        }),
      );
    }
    expect(verdicts).toEqual([
      { skip: true, result: { isValid: true, payer: buyer.address } },
      undefined,
      undefined,
    ]);
    expect(asked[0]).toEqual([ASSET, signed, paymentPayload.payload['signature']]);
  });
});
