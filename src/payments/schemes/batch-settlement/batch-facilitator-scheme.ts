import type { PaymentPayload, PaymentRequirements, VerifyResponse } from '@x402/core/types';
import type { FacilitatorEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/facilitator';
import type { PrivateKeyAccount } from 'viem';
import { EmbeddedFacilitatorScheme } from '../../facilitator/embedded-schemes.js';
import { verifyDepositNatively } from './deposit-verification.js';

/** Provider token of `batch-settlement`'s side of the embedded facilitator. */
export const BATCH_EMBEDDED_FACILITATOR = Symbol('BatchEmbeddedFacilitator');

/**
 * The SDK's facilitator scheme, verifying a deposit natively first (verifyDepositNatively);
 * one that is not proven valid that way, and everything else, is the SDK's to decide.
 */
export class NativeDepositFacilitatorScheme extends BatchSettlementEvmScheme {
  private readonly chain: FacilitatorEvmSigner;

  constructor(signer: FacilitatorEvmSigner, authorizer: PrivateKeyAccount) {
    super(signer, authorizer);
    this.chain = signer;
  }

  override async verify(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    ...rest: Parameters<BatchSettlementEvmScheme['verify']> extends [unknown, unknown, ...infer R]
      ? R
      : never
  ): Promise<VerifyResponse> {
    return (
      (await verifyDepositNatively(this.chain, payload, requirements)) ??
      (await super.verify(payload, requirements, ...rest))
    );
  }
}

/**
 * `batch-settlement` on the embedded facilitator: deposits, claims, settlements and refunds go
 * through the settlement key, which also signs the claim batches and refunds as the channels'
 * receiver authorizer.
 */
export const batchEmbeddedFacilitator = new EmbeddedFacilitatorScheme(
  'batch-settlement',
  (facilitator, { network, signer, account }) =>
    facilitator.register(network, new NativeDepositFacilitatorScheme(signer, account)),
);
