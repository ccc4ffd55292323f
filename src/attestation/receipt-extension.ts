import type { ResourceServerExtension } from '@x402/core/types';
import {
  OFFER_RECEIPT,
  createEIP712OfferReceiptIssuer,
  createOfferReceiptExtension,
  type OfferReceiptDeclaration,
} from '@x402/extensions/offer-receipt';
import type { RequestedExtension } from '../payments/index.js';
import type { AttestationSigner } from './attestation-signer.js';

/** A receipt names its settlement transaction: the buyer asked for proof, not privacy. */
const RECEIPT_DECLARATION: OfferReceiptDeclaration = { includeTxHash: true };

/**
 * x402's offer-receipt extension, receipts only: a buyer whose payment names `offer-receipt`
 * gets a receipt signed by the attestation key (EIP-712) in its settlement response. No signed
 * offers: a 402 stays one cached answer rather than a signature per challenge.
 *
 * The receipt's `resourceUrl` is what was bought: the request's path (no query) on PUBLIC_URL,
 * or the path alone without it. Never the Host or X-Forwarded-Host a client sent: the service
 * must not sign a URL the buyer chose.
 */
export function receiptExtension(
  signer: AttestationSigner,
  publicUrl: string | undefined,
): RequestedExtension {
  const issuer = createEIP712OfferReceiptIssuer(
    `did:pkh:eip155:1:${signer.address}`,
    signer.signTypedData,
  );
  const enrich = createOfferReceiptExtension(issuer).enrichSettlementResponse;
  const extension: ResourceServerExtension = {
    key: OFFER_RECEIPT,
    ...(enrich === undefined
      ? {}
      : {
          enrichSettlementResponse: (declaration, context) =>
            enrich(declaration, withSoldUrl(context, publicUrl)),
        }),
  };
  return { extension, declaration: RECEIPT_DECLARATION };
}

type SettleResultContext = Parameters<
  NonNullable<ResourceServerExtension['enrichSettlementResponse']>
>[1];

/** `context` whose transport names the sold resource as receiptExtension says, not as asked. */
export function withSoldUrl(
  context: SettleResultContext,
  publicUrl: string | undefined,
): SettleResultContext {
  const transport = context.transportContext as
    { request?: { adapter?: { getPath?: () => string } } } | undefined;
  const adapter = transport?.request?.adapter;
  const path = adapter?.getPath?.();
  if (transport?.request === undefined || adapter === undefined || path === undefined) {
    return context;
  }
  const soldUrl = `${publicUrl ?? ''}${path}`;
  return {
    ...context,
    transportContext: {
      ...transport,
      // the adapter as it is, but for the URL
      request: {
        ...transport.request,
        adapter: Object.create(adapter, { getUrl: { value: () => soldUrl } }) as object,
      },
    },
  };
}
