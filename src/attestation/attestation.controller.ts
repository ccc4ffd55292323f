import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { OFFER_RECEIPT } from '@x402/extensions/offer-receipt';
import { ATTESTATION_SIGNER, type AttestationSigner } from './attestation-signer.js';
import { PriceAttestationInfoDto } from './attestation.dto.js';
import {
  PRICE_ATTESTATION_DOMAIN,
  PRICE_ATTESTATION_HEADER,
  PRICE_ATTESTATION_PRIMARY_TYPE,
  PRICE_ATTESTATION_TYPES,
  PRICE_DECIMALS,
} from './price-attestation.js';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
/** Changes only when the key does (a deploy): a proxy may keep it for five minutes. */
const INFO_CACHE = 'public, max-age=300';

export const FIXED_POINT_RULE =
  `The price as the JSON body writes it, rounded half away from zero to ${PRICE_DECIMALS} ` +
  `decimals, times 10^${PRICE_DECIMALS} (91260.27 → 9126027000000).`;

export const RECEIPT_REQUEST =
  `Send \`extensions: {"${OFFER_RECEIPT}": {}}\` in the x402 v2 payment payload; the ` +
  `settlement response (PAYMENT-RESPONSE) then carries \`extensions["${OFFER_RECEIPT}"].info.receipt\`, ` +
  'an EIP-712 receipt signed by the signer above.';

@ApiTags('attestation')
@Controller('.well-known')
export class AttestationController {
  /** Fixed once configured: serialized once, not per request. */
  private readonly body: string;

  constructor(@Inject(ATTESTATION_SIGNER) signer: AttestationSigner | null) {
    const info: PriceAttestationInfoDto = {
      enabled: signer !== null,
      signer: signer?.address ?? null,
      header: PRICE_ATTESTATION_HEADER,
      encoding: 'base64 of the JSON {message, signature}',
      domain: { ...PRICE_ATTESTATION_DOMAIN },
      primaryType: PRICE_ATTESTATION_PRIMARY_TYPE,
      types: {
        PriceAttestation: [...PRICE_ATTESTATION_TYPES.PriceAttestation],
        PricePoint: [...PRICE_ATTESTATION_TYPES.PricePoint],
      },
      fixedPoint: { decimals: PRICE_DECIMALS, rule: FIXED_POINT_RULE },
      receipts: { extension: OFFER_RECEIPT, request: RECEIPT_REQUEST },
    };
    this.body = JSON.stringify(info);
  }

  @Get('price-attestation')
  @ApiOperation({
    operationId: 'getPriceAttestationInfo',
    summary: 'How to verify the signed price answers',
    description:
      'Free. The address that signs every paid price answer (header `Price-Attestation`) and ' +
      'every x402 receipt, the EIP-712 domain and types, and the fixed-point rule for prices.',
  })
  @ApiOkResponse({ type: PriceAttestationInfoDto, description: 'Signer, domain, types, rules.' })
  @Header('content-type', JSON_CONTENT_TYPE)
  @Header('cache-control', INFO_CACHE)
  info(): string {
    return this.body;
  }
}
