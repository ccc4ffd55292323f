import {
  InMemoryPendingSettlementStore,
  type PendingSettlementStore,
} from '@x402/core/facilitator';
import type {
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  VerifyResponse,
} from '@x402/core/types';
import {
  isBatchSettlementDepositPayload,
  resolveDataSuffix,
  type FacilitatorEvmSigner,
} from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/facilitator';
import type { PrivateKeyAccount } from 'viem';
import { EmbeddedFacilitatorScheme } from '../../facilitator/embedded-schemes.js';
import { settleVerifiedDeposit } from './deposit-settlement.js';
import { provenDeposit, verifyDepositNatively } from './deposit-verification.js';

/** Provider token of `batch-settlement`'s side of the embedded facilitator. */
export const BATCH_EMBEDDED_FACILITATOR = Symbol('BatchEmbeddedFacilitator');

type Rest<F> = F extends (payload: never, requirements: never, ...rest: infer R) => unknown
  ? R
  : never;

/**
 * The SDK's facilitator scheme, with deposits checked natively first (verifyDepositNatively):
 * a deposit proven valid that way is verified, and settled (settleVerifiedDeposit), without
 * viem's pure-JS signature recovery or a read of the payer's code. A deposit not proven valid,
 * one whose transaction is already pending, and every other payload are the SDK's to decide.
 */
export class NativeDepositFacilitatorScheme extends BatchSettlementEvmScheme {
  private readonly chain: FacilitatorEvmSigner;
  /** Deposits sent and not confirmed, shared with the SDK, which reconciles them. */
  private readonly pending: PendingSettlementStore;

  constructor(signer: FacilitatorEvmSigner, authorizer: PrivateKeyAccount) {
    const pending = new InMemoryPendingSettlementStore();
    super(signer, authorizer, { pendingSettlementStore: pending });
    this.chain = signer;
    this.pending = pending;
  }

  override async verify(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    ...rest: Rest<BatchSettlementEvmScheme['verify']>
  ): Promise<VerifyResponse> {
    return (
      (await verifyDepositNatively(this.chain, payload, requirements)) ??
      (await super.verify(payload, requirements, ...rest))
    );
  }

  override async settle(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    ...rest: Rest<BatchSettlementEvmScheme['settle']>
  ): Promise<SettleResponse> {
    const raw = payload.payload;
    const key = isBatchSettlementDepositPayload(raw)
      ? raw.deposit.authorization.erc3009Authorization?.signature
      : undefined;
    if (key === undefined || (await this.pending.get(key)) !== undefined) {
      return super.settle(payload, requirements, ...rest);
    }
    const before = await provenDeposit(this.chain, payload, requirements);
    if (before === undefined) return super.settle(payload, requirements, ...rest);
    const [context] = rest;
    const dataSuffix = await resolveDataSuffix(context, {
      paymentPayload: payload,
      paymentRequirements: requirements,
    });
    return settleVerifiedDeposit(
      this.chain,
      payload,
      requirements,
      before,
      this.pending,
      dataSuffix,
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
