import {
  hashTypedData,
  hexToBytes,
  keccak256,
  serializeSignature,
  serializeTransaction,
  type Hex,
} from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { signDigest } from '../../chain/ecdsa.js';

/**
 * viem's private-key account, signing hashes, transactions and EIP-712 data with libsecp256k1
 * instead of viem's pure-JS secp256k1 (about a millisecond of CPU per signature on the machine
 * this was measured on; the settlement key signs one transaction per `exact` payment). The
 * signatures are the same bytes (RFC 6979 nonces, low `s`); messages and EIP-7702
 * authorizations keep viem's signer.
 */
export function nativeSigningAccount(
  privateKey: Hex,
  options: Parameters<typeof privateKeyToAccount>[1] = {},
): PrivateKeyAccount {
  const account = privateKeyToAccount(privateKey, options);
  const secret = hexToBytes(privateKey);
  const signTransaction: PrivateKeyAccount['signTransaction'] = async (
    transaction,
    { serializer = serializeTransaction } = {},
  ) => {
    // an EIP-4844 transaction is signed without its sidecars (its network wrapper)
    const signable =
      transaction.type === 'eip4844' ? { ...transaction, sidecars: false } : transaction;
    const signature = signDigest(keccak256(await serializer(signable)), secret);
    return serializer(transaction, signature);
  };
  return {
    ...account,
    sign: ({ hash }) => Promise.resolve(serializeSignature(signDigest(hash, secret))),
    signTransaction,
    signTypedData: (typedData) =>
      Promise.resolve(serializeSignature(signDigest(hashTypedData(typedData), secret))),
  };
}
