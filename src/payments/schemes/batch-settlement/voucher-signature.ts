import {
  concatBytes,
  domainSeparator as eip712DomainSeparator,
  hexToBytes,
  keccak256,
  numberToBytes,
  toBytes,
  type Hex,
} from 'viem';
import { recoverSigner, typedDataDigest } from '../../../chain/ecdsa.js';

/** The channel contract every network uses (the SDK's CREATE2 address), and its EIP-712 name. */
const CHANNEL_CONTRACT = '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003';
const DOMAIN_NAME = 'x402 Batch Settlement';
const DOMAIN_VERSION = '1';
const VOUCHER_TYPEHASH = keccak256(
  toBytes('Voucher(bytes32 channelId,uint128 maxClaimableAmount)'),
  'bytes',
);

const domainSeparators = new Map<number, Uint8Array>();

/** The EIP-712 digest a voucher's signature signs (the SDK's and the contract's domain and type). */
export function voucherDigest(
  channelId: Hex,
  maxClaimableAmount: bigint,
  chainId: number,
): Uint8Array {
  const struct = keccak256(
    concatBytes([
      VOUCHER_TYPEHASH,
      hexToBytes(channelId),
      numberToBytes(maxClaimableAmount, { size: 32 }),
    ]),
    'bytes',
  );
  return typedDataDigest(domainSeparator(chainId), struct);
}

/** The address that signed a voucher (recovered natively); undefined if the signature is not canonical. */
export function voucherSigner(
  channelId: Hex,
  maxClaimableAmount: bigint,
  chainId: number,
  signature: Hex,
): Hex | undefined {
  return recoverSigner(voucherDigest(channelId, maxClaimableAmount, chainId), signature);
}

function domainSeparator(chainId: number): Uint8Array {
  let separator = domainSeparators.get(chainId);
  if (separator === undefined) {
    separator = hexToBytes(
      eip712DomainSeparator({
        domain: {
          name: DOMAIN_NAME,
          version: DOMAIN_VERSION,
          chainId: BigInt(chainId),
          verifyingContract: CHANNEL_CONTRACT,
        },
      }),
    );
    domainSeparators.set(chainId, separator);
  }
  return separator;
}
