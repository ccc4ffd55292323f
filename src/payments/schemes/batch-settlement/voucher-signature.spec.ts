import { signVoucher } from '@x402/evm/batch-settlement/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { isCanonicalSignature } from '../../../chain/ecdsa.js';
import { voucherSigner } from './voucher-signature.js';

const NETWORK = 'eip155:84532';
const CHAIN_ID = 84532;
const CHANNEL = `0x${'ab'.repeat(32)}` as const;
const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** The same signature with s' = n - s and the other recovery id: valid math, refused by the contract. */
function malleableTwin(signature: `0x${string}`): `0x${string}` {
  const r = signature.slice(2, 66);
  const s = CURVE_ORDER - BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130), 16);
  const flipped = v === 27 ? 28 : v === 28 ? 27 : 1 - v;
  return `0x${r}${s.toString(16).padStart(64, '0')}${flipped.toString(16).padStart(2, '0')}`;
}

describe('voucher signatures', () => {
  const account = privateKeyToAccount(generatePrivateKey());

  it('recovers the signer of a voucher the SDK client signed, for exactly that channel and amount', async () => {
    const { signature } = await signVoucher(account, CHANNEL, '4000', NETWORK);
    expect(voucherSigner(CHANNEL, 4000n, CHAIN_ID, signature)?.toLowerCase()).toBe(
      account.address.toLowerCase(),
    );
    expect(voucherSigner(CHANNEL, 4001n, CHAIN_ID, signature)?.toLowerCase()).not.toBe(
      account.address.toLowerCase(),
    );
    expect(voucherSigner(`0x${'cd'.repeat(32)}`, 4000n, CHAIN_ID, signature)).not.toBe(
      account.address,
    );
    expect(voucherSigner(CHANNEL, 4000n, 8453, signature)?.toLowerCase()).not.toBe(
      account.address.toLowerCase(),
    );
  });

  it('refuses the malleable twin of a valid signature, and anything but 65 canonical bytes', async () => {
    const { signature } = await signVoucher(account, CHANNEL, '4000', NETWORK);
    const twin = malleableTwin(signature);
    expect(isCanonicalSignature(signature)).toBe(true);
    expect(isCanonicalSignature(twin)).toBe(false);
    expect(voucherSigner(CHANNEL, 4000n, CHAIN_ID, twin)).toBeUndefined();
    expect(isCanonicalSignature(`${signature}00`)).toBe(false);
    expect(isCanonicalSignature(`0x${signature.slice(2, 130)}1d`)).toBe(false);
    // v 0/1 recovers the same signer, but OpenZeppelin's ECDSA (the deployed contract) refuses it
    const v = Number.parseInt(signature.slice(130), 16) - 27;
    expect(isCanonicalSignature(`0x${signature.slice(2, 130)}0${v}`)).toBe(false);
    expect(isCanonicalSignature(`0x${signature.slice(2, 66)}${'00'.repeat(32)}1b`)).toBe(false);
  });
});
