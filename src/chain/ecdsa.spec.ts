import { recoverTypedDataAddress, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { typedDataSigner } from './ecdsa.js';

/** An EIP-3009 ReceiveWithAuthorization as a batch-settlement deposit signs it. */
const AUTHORIZATION = {
  domain: {
    name: 'USDC',
    version: '2',
    chainId: 84532,
    verifyingContract: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  },
  types: {
    ReceiveWithAuthorization: [
      { name: 'from', type: 'address' },
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'validAfter', type: 'uint256' },
      { name: 'validBefore', type: 'uint256' },
      { name: 'nonce', type: 'bytes32' },
    ],
  },
  primaryType: 'ReceiveWithAuthorization',
} as const;

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** viem's answer: the recovered address, or 'refused' when it throws. */
async function viemSigner(typedData: Parameters<typeof typedDataSigner>[0], signature: Hex) {
  try {
    return (await recoverTypedDataAddress({ ...typedData, signature })).toLowerCase();
  } catch {
    return 'refused';
  }
}

function nativeSigner(typedData: Parameters<typeof typedDataSigner>[0], signature: Hex) {
  return typedDataSigner(typedData, signature) ?? 'refused';
}

/** The same signature with `s` replaced by n - s and the parity flipped: its malleable twin. */
function highS(signature: Hex): Hex {
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130), 16);
  const twinS = (N - s).toString(16).padStart(64, '0');
  const twinV = (v === 27 ? 28 : 27).toString(16);
  return `${signature.slice(0, 66)}${twinS}${twinV}` as Hex;
}

function withV(signature: Hex, v: number): Hex {
  return `${signature.slice(0, 130)}${v.toString(16).padStart(2, '0')}` as Hex;
}

describe('typedDataSigner: EIP-712 signer recovered with libsecp256k1', () => {
  const payer = privateKeyToAccount(generatePrivateKey());
  const stranger = privateKeyToAccount(generatePrivateKey());
  const message = {
    from: payer.address,
    to: '0x4020806089470a89826cB9fB1f4059150b550004',
    value: 5_000_000n,
    validAfter: 0n,
    validBefore: 1_900_000_000n,
    nonce: `0x${'5a'.repeat(32)}`,
  } as const;
  const typedData = { ...AUTHORIZATION, message };
  let signed: Hex;
  let signedByStranger: Hex;

  beforeAll(async () => {
    signed = await payer.signTypedData(typedData);
    signedByStranger = await stranger.signTypedData(typedData);
  });

  it('recovers the signer viem recovers', async () => {
    expect(nativeSigner(typedData, signed)).toBe(payer.address.toLowerCase());
    expect(await viemSigner(typedData, signed)).toBe(payer.address.toLowerCase());
  });

  it('recovers another key as viem does: a wrong signer is told apart by address', async () => {
    expect(nativeSigner(typedData, signedByStranger)).toBe(stranger.address.toLowerCase());
    expect(await viemSigner(typedData, signedByStranger)).toBe(stranger.address.toLowerCase());
  });

  it('gives the same answer as viem when the message changed after signing', async () => {
    const changed = { ...typedData, message: { ...message, value: 5_000_001n } };
    const native = nativeSigner(changed, signed);
    expect(native).toBe(await viemSigner(changed, signed));
    expect(native).not.toBe(payer.address.toLowerCase());
  });

  it.each([
    ['64 bytes', (s: Hex) => s.slice(0, 130) as Hex],
    ['66 bytes', (s: Hex) => `${s}00` as Hex],
    ['v = 29', (s: Hex) => withV(s, 29)],
    ['r = 0', (s: Hex) => `0x${'00'.repeat(32)}${s.slice(66)}` as Hex],
    ['s = 0', (s: Hex) => `${s.slice(0, 66)}${'00'.repeat(32)}${s.slice(130)}` as Hex],
    ['r = n', (s: Hex) => `0x${N.toString(16)}${s.slice(66)}` as Hex],
  ])('refuses what viem refuses: %s', async (_, malform) => {
    const malformed = malform(signed);
    expect(await viemSigner(typedData, malformed)).toBe('refused');
    expect(nativeSigner(typedData, malformed)).toBe('refused');
  });

  // viem recovers the payer from these two, but the token (USDC's ECRecover) and the channel
  // contract (OpenZeppelin's ECDSA) revert on them: refused here before any chain call.
  it('refuses the high-s twin of a valid signature, which viem accepts and the contracts refuse', async () => {
    const twin = highS(signed);
    expect(await viemSigner(typedData, twin)).toBe(payer.address.toLowerCase());
    expect(nativeSigner(typedData, twin)).toBe('refused');
  });

  it('refuses v = 0/1 (yParity), which viem accepts and the contracts refuse', async () => {
    const v = Number.parseInt(signed.slice(130), 16);
    const parity = withV(signed, v - 27);
    expect(await viemSigner(typedData, parity)).toBe(payer.address.toLowerCase());
    expect(nativeSigner(typedData, parity)).toBe('refused');
  });

  it('refuses data that does not hash (a value outside its type)', () => {
    const outOfRange = { ...typedData, message: { ...message, value: -1n } };
    expect(nativeSigner(outOfRange, signed)).toBe('refused');
  });
});
