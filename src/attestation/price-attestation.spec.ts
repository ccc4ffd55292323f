import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { AttestationSigner } from './attestation-signer.js';
import {
  attestationProblem,
  decodePriceAttestation,
  encodePriceAttestation,
  fixedPointPrice,
  spreadBps,
  type PriceAttestationMessage,
} from './price-attestation.js';

describe('fixedPointPrice', () => {
  it.each([
    [91260.27, 9_126_027_000_000n],
    [3012.46, 301_246_000_000n],
    [1.00021, 100_021_000n],
    [0.154102, 15_410_200n],
    [0.00000984174, 984n],
    [0.000000985, 99n],
    [9.8e-7, 98n],
    [5e-9, 1n],
    [1234567.89, 123_456_789_000_000n],
  ])('signs %p as %p', (price, fixed) => {
    expect(fixedPointPrice(price)).toBe(fixed);
  });

  it('refuses what is not a price', () => {
    expect(() => fixedPointPrice(0)).toThrow(RangeError);
    expect(() => fixedPointPrice(Number.NaN)).toThrow(RangeError);
  });
});

describe('spreadBps', () => {
  it('rounds to whole basis points', () => {
    expect(spreadBps(0)).toBe(0);
    expect(spreadBps(0.00124)).toBe(12);
    expect(spreadBps(0.00125)).toBe(13);
    expect(spreadBps(0.02)).toBe(200);
  });
});

describe('the Price-Attestation header', () => {
  const signer = new AttestationSigner(generatePrivateKey());
  const message: PriceAttestationMessage = {
    currency: 'USD',
    timestamp: BigInt(Date.parse('2026-11-20T12:00:00.000Z')),
    prices: [
      { symbol: 'BTC', price: 9_126_027_000_000n, venues: 5, spreadBps: 12 },
      { symbol: 'ETH', price: 301_246_000_000n, venues: 4, spreadBps: 7 },
    ],
  };
  const body = {
    timestamp: '2026-11-20T12:00:00.000Z',
    currency: 'USD',
    prices: { BTC: 91260.27, ETH: 3012.46 },
  };

  it('survives encoding', async () => {
    const signed = await signer.signPrices(message);
    expect(decodePriceAttestation(encodePriceAttestation(signed))).toEqual(signed);
  });

  it('proves the body it was made for', async () => {
    const header = encodePriceAttestation(await signer.signPrices(message));
    await expect(attestationProblem(header, body, signer.address)).resolves.toBeUndefined();
  });

  it('does not prove a body altered by one unit, reordered, or of another time', async () => {
    const header = encodePriceAttestation(await signer.signPrices(message));
    const altered = { ...body, prices: { BTC: 91260.28, ETH: 3012.46 } };
    await expect(attestationProblem(header, altered, signer.address)).resolves.toBe(
      'the price of BTC differs from the body',
    );
    const reordered = { ...body, prices: { ETH: 3012.46, BTC: 91260.27 } };
    await expect(attestationProblem(header, reordered, signer.address)).resolves.toBe(
      'the symbols differ from the body',
    );
    const earlier = { ...body, timestamp: '2026-11-20T11:59:59.999Z' };
    await expect(attestationProblem(header, earlier, signer.address)).resolves.toBe(
      "the timestamp is later than the body's",
    );
  });

  it("proves a body aggregated after its oldest input, the attestation's time", async () => {
    const header = encodePriceAttestation(await signer.signPrices(message));
    const later = { ...body, timestamp: '2026-11-20T12:00:40.000Z' };
    await expect(attestationProblem(header, later, signer.address)).resolves.toBeUndefined();
  });

  it('is nobody else’s signature, and a changed message is nobody’s', async () => {
    const signed = await signer.signPrices(message);
    const other = privateKeyToAccount(generatePrivateKey()).address;
    await expect(attestationProblem(encodePriceAttestation(signed), body, other)).resolves.toMatch(
      /^the signature is not/,
    );
    const forged = encodePriceAttestation({
      ...signed,
      message: { ...message, prices: [{ ...message.prices[0]!, venues: 9 }, message.prices[1]!] },
    });
    await expect(attestationProblem(forged, body, signer.address)).resolves.toMatch(
      /^the signature is not/,
    );
  });

  it('names a missing or unreadable header', async () => {
    await expect(attestationProblem(null, body, signer.address)).resolves.toBe(
      'no Price-Attestation header',
    );
    await expect(attestationProblem('bm90IGpzb24=', body, signer.address)).resolves.toBe(
      'the Price-Attestation header is not an attestation',
    );
  });
});
