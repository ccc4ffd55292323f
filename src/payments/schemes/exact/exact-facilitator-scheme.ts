import type { Network } from '@x402/core/types';
import { ExactEvmSchemeV1 } from '@x402/evm/exact/v1/facilitator';
import { NETWORKS } from '@x402/evm/v1';
import { EmbeddedFacilitatorScheme } from '../../facilitator/embedded-schemes.js';
import { SellerExactFacilitator } from './seller-exact-facilitator.js';

/** Provider token of `exact`'s side of the embedded facilitator. */
export const EXACT_EMBEDDED_FACILITATOR = Symbol('ExactEmbeddedFacilitator');

/** `exact` on the embedded facilitator: for x402 v2 and for v1 clients. */
export const exactEmbeddedFacilitator = new EmbeddedFacilitatorScheme(
  'exact',
  (facilitator, { network, signer }) => {
    // the SDK's scheme, but an EOA's transfer that pays the offer is not verified twice
    facilitator.register(network, new SellerExactFacilitator(signer));
    // v1's network names (`base-sepolia`), which the SDK's `Network` type does not spell
    facilitator.registerV1(NETWORKS as Network[], new ExactEvmSchemeV1(signer));
  },
);
