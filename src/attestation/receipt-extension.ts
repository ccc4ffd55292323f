import type { ResourceServerExtension } from '@x402/core/types';
import {
  OFFER_RECEIPT,
  createEIP712OfferReceiptIssuer,
  createOfferReceiptExtension,
  type OfferReceiptDeclaration,
} from '@x402/extensions/offer-receipt';
import type { RequestedExtension } from '../payments/requested-extensions.js';
import type { AttestationSigner } from './attestation-signer.js';

/** A receipt names its settlement transaction: the buyer asked for proof, not privacy. */
const RECEIPT_DECLARATION: OfferReceiptDeclaration = { includeTxHash: true };

/**
 * x402's offer-receipt extension, receipts only: a buyer whose payment names `offer-receipt`
 * gets a receipt signed by the attestation key (EIP-712) in its settlement response. No signed
 * offers: a 402 stays one cached answer rather than a signature per challenge.
 */
export function receiptExtension(signer: AttestationSigner): RequestedExtension {
  const issuer = createEIP712OfferReceiptIssuer(
    `did:pkh:eip155:1:${signer.address}`,
    signer.signTypedData,
  );
  const { enrichSettlementResponse } = createOfferReceiptExtension(issuer);
  const extension: ResourceServerExtension = {
    key: OFFER_RECEIPT,
    ...(enrichSettlementResponse === undefined ? {} : { enrichSettlementResponse }),
  };
  return { extension, declaration: RECEIPT_DECLARATION };
}
