import type { SignTypedDataFn } from '@x402/extensions/offer-receipt';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import {
  priceAttestationTypedData,
  type PriceAttestationMessage,
  type SignedPriceAttestation,
} from './price-attestation.js';

/** The attestation signer, or null with ATTESTATION=off. */
export const ATTESTATION_SIGNER = Symbol('AttestationSigner');

/**
 * The service's attestation key: it signs price answers and x402 receipts (EIP-712). Signatures
 * are deterministic (RFC 6979), so instances sharing the key sign the same message identically.
 */
export class AttestationSigner {
  private readonly account: PrivateKeyAccount;

  constructor(privateKey: Hex) {
    this.account = privateKeyToAccount(privateKey);
  }

  get address(): Address {
    return this.account.address;
  }

  async signPrices(message: PriceAttestationMessage): Promise<SignedPriceAttestation> {
    const signature = await this.account.signTypedData(priceAttestationTypedData(message));
    return { message, signature };
  }

  /** For the offer-receipt issuer, which brings its own domain and types. */
  readonly signTypedData: SignTypedDataFn = (parameters) => this.account.signTypedData(parameters);
}
