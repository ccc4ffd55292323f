import { generatePrivateKey } from 'viem/accounts';
import type { AttestableAnswer, AttestedClaims } from './attestable-answer.js';
import { AttestationSigner } from './attestation-signer.js';
import { decodePriceAttestation, type PriceAttestationMessage } from './price-attestation.js';
import { PriceAttestor, attestedMessage } from './price-attestor.js';

/** Signs with a real key and counts what it was asked to sign. */
class CountingSigner extends AttestationSigner {
  readonly signed: PriceAttestationMessage[] = [];

  override signPrices(message: PriceAttestationMessage) {
    this.signed.push(message);
    return super.signPrices(message);
  }
}

const AS_OF = Date.parse('2026-11-20T12:00:00.000Z');

const CLAIMS: AttestedClaims = {
  currency: 'USD',
  timestamp: AS_OF,
  values: [
    { symbol: 'ETH', value: 3012.46, venues: 2, spread: 0.00049 },
    { symbol: 'BTC', value: 91260.27, venues: 3, spread: 0.0012 },
  ],
};

function answer(claims: AttestedClaims, claimsKey?: AttestableAnswer['claimsKey']) {
  return { attestedClaims: () => claims, ...(claimsKey === undefined ? {} : { claimsKey }) };
}

describe('attestedMessage', () => {
  it('signs the values in their order by the fixed-point rule, spreads in basis points', () => {
    expect(attestedMessage(CLAIMS)).toEqual({
      currency: 'USD',
      timestamp: BigInt(AS_OF),
      prices: [
        { symbol: 'ETH', price: 301_246_000_000n, venues: 2, spreadBps: 5 },
        { symbol: 'BTC', price: 9_126_027_000_000n, venues: 3, spreadBps: 12 },
      ],
    });
  });

  it('signs 0 venues and 0 spread where they do not apply', () => {
    const claims = {
      currency: 'USD',
      timestamp: AS_OF,
      values: [{ symbol: 'apple', value: 1.25 }],
    };
    expect(attestedMessage(claims).prices).toEqual([
      { symbol: 'apple', price: 125_000_000n, venues: 0, spreadBps: 0 },
    ]);
  });

  it('signs whole milliseconds, rounded down: never later than the claimed time', () => {
    expect(attestedMessage({ ...CLAIMS, timestamp: AS_OF - 0.5 }).timestamp).toBe(
      BigInt(AS_OF - 1),
    );
  });

  it('refuses a venue count the message cannot hold', () => {
    for (const venues of [-1, 1.5, 65_536]) {
      const claims = { ...CLAIMS, values: [{ symbol: 'BTC', value: 1, venues }] };
      expect(() => attestedMessage(claims)).toThrow(`BTC: ${venues} venues`);
    }
  });
});

describe('PriceAttestor', () => {
  const key = generatePrivateKey();

  it('signs once per source and key', async () => {
    const signer = new CountingSigner(key);
    const attestor = new PriceAttestor(signer);
    const source = {};
    const both = answer(CLAIMS, { source, key: 'ETH,BTC' });
    const first = await Promise.all([attestor.headerFor(both), attestor.headerFor(both)]);
    expect(await attestor.headerFor(both)).toBe(first[0]);
    expect(first[1]).toBe(first[0]);
    expect(signer.signed).toHaveLength(1);
    await attestor.headerFor(answer(CLAIMS, { source, key: 'BTC' }));
    await attestor.headerFor(answer(CLAIMS, { source: {}, key: 'ETH,BTC' }));
    expect(signer.signed).toHaveLength(3);
  });

  it('signs an answer without a key every time', async () => {
    const signer = new CountingSigner(key);
    const attestor = new PriceAttestor(signer);
    await attestor.headerFor(answer(CLAIMS));
    await attestor.headerFor(answer(CLAIMS));
    expect(signer.signed).toHaveLength(2);
  });

  it('signs the same claims identically wherever the key is shared', async () => {
    const one = await new PriceAttestor(new AttestationSigner(key)).headerFor(answer(CLAIMS));
    const two = await new PriceAttestor(new AttestationSigner(key)).headerFor(answer(CLAIMS));
    expect(two).toBe(one);
    expect(decodePriceAttestation(one ?? '').message).toEqual(attestedMessage(CLAIMS));
  });

  it('rejects, and keeps nothing, when the claims cannot be signed', async () => {
    const signer = new CountingSigner(key);
    const attestor = new PriceAttestor(signer);
    const source = {};
    let claims: AttestedClaims = { ...CLAIMS, values: [{ symbol: 'BTC', value: 0 }] };
    const keyed = { attestedClaims: () => claims, claimsKey: { source, key: 'BTC' } };
    await expect(attestor.headerFor(keyed)).rejects.toThrow(RangeError);
    claims = CLAIMS;
    await expect(attestor.headerFor(keyed)).resolves.toEqual(expect.any(String));
    expect(signer.signed).toHaveLength(1);
  });

  it('makes nothing with attestation off', () => {
    expect(new PriceAttestor(null).headerFor(answer(CLAIMS))).toBeUndefined();
  });
});
