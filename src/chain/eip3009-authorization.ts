import {
  concatBytes,
  domainSeparator as eip712DomainSeparator,
  getAddress,
  hexToBytes,
  keccak256,
  numberToBytes,
  parseSignature,
  toBytes,
  type Hex,
} from 'viem';
import { recoverSigner, typedDataDigest } from './ecdsa.js';

/** An EIP-3009 `transferWithAuthorization`, exactly as the token executes it. */
export interface Eip3009Authorization {
  readonly from: `0x${string}`;
  readonly to: `0x${string}`;
  readonly value: string;
  readonly validAfter: string;
  readonly validBefore: string;
  readonly nonce: `0x${string}`;
}

const TRANSFER_WITH_AUTHORIZATION_TYPEHASH = keccak256(
  toBytes(
    'TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)',
  ),
  'bytes',
);

/** The token's EIP-712 domain: its name and version (the offer's `extra`), chain and address. */
export interface TokenDomain {
  readonly name: string;
  readonly version: string;
  readonly chainId: number;
  readonly verifyingContract: Hex;
}

/** One per token this service is paid in: a handful at most. */
const domainSeparators = new Map<string, Uint8Array>();

/** The EIP-712 digest an EIP-3009 `transferWithAuthorization` signature signs. */
export function transferAuthorizationDigest(
  domain: TokenDomain,
  authorization: Eip3009Authorization,
): Uint8Array {
  const struct = keccak256(
    concatBytes([
      TRANSFER_WITH_AUTHORIZATION_TYPEHASH,
      addressWord(authorization.from),
      addressWord(authorization.to),
      numberToBytes(BigInt(authorization.value), { size: 32 }),
      numberToBytes(BigInt(authorization.validAfter), { size: 32 }),
      numberToBytes(BigInt(authorization.validBefore), { size: 32 }),
      hexToBytes(authorization.nonce),
    ]),
    'bytes',
  );
  return typedDataDigest(domainSeparator(domain), struct);
}

/**
 * The address that signed an EIP-3009 authorization (recovered natively, lower-case); undefined
 * for a signature that is not 65 canonical bytes (a smart wallet's, say).
 */
export function transferAuthorizationSigner(
  domain: TokenDomain,
  authorization: Eip3009Authorization,
  signature: Hex,
): Hex | undefined {
  return recoverSigner(transferAuthorizationDigest(domain, authorization), signature);
}

/**
 * The arguments of the token's `transferWithAuthorization(from, to, value, validAfter,
 * validBefore, nonce, v, r, s)` for a 65-byte signature.
 */
export function transferWithAuthorizationArgs(
  authorization: Eip3009Authorization,
  signature: Hex,
): readonly [Hex, Hex, bigint, bigint, bigint, Hex, number, Hex, Hex] {
  const { v, r, s } = parseSignature(signature);
  return [
    getAddress(authorization.from),
    getAddress(authorization.to),
    BigInt(authorization.value),
    BigInt(authorization.validAfter),
    BigInt(authorization.validBefore),
    authorization.nonce,
    Number(v),
    r,
    s,
  ];
}

function addressWord(address: Hex): Uint8Array {
  return numberToBytes(BigInt(address), { size: 32 });
}

function domainSeparator(domain: TokenDomain): Uint8Array {
  const key = `${domain.name}\n${domain.version}\n${domain.chainId}\n${domain.verifyingContract.toLowerCase()}`;
  let separator = domainSeparators.get(key);
  if (separator === undefined) {
    separator = hexToBytes(
      eip712DomainSeparator({
        domain: { ...domain, chainId: BigInt(domain.chainId) },
      }),
    );
    domainSeparators.set(key, separator);
  }
  return separator;
}
