import { BatchSettlementEvmScheme as BatchSettlementFacilitatorScheme } from '@x402/evm/batch-settlement/facilitator';
import { EmbeddedFacilitatorScheme } from '../../facilitator/embedded-schemes.js';

/** Provider token of `batch-settlement`'s side of the embedded facilitator. */
export const BATCH_EMBEDDED_FACILITATOR = Symbol('BatchEmbeddedFacilitator');

/**
 * `batch-settlement` on the embedded facilitator: deposits, claims, settlements and refunds go
 * through the settlement key, which also signs the claim batches and refunds as the channels'
 * receiver authorizer.
 */
export const batchEmbeddedFacilitator = new EmbeddedFacilitatorScheme(
  'batch-settlement',
  (facilitator, { network, signer, account }) =>
    facilitator.register(network, new BatchSettlementFacilitatorScheme(signer, account)),
);
