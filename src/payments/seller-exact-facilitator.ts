import type {
  FacilitatorContext,
  Network,
  PaymentPayload,
  PaymentRequirements,
  SchemeNetworkFacilitator,
  SettleResponse,
  VerifyResponse,
} from '@x402/core/types';
import { BUILDER_CODE_KEY, eip3009ABI, type FacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { getAddress, type Hex, type TransactionReceipt } from 'viem';
import { exactEvmPayload } from './payment-acceptance.js';
import { verifiedLocally } from './seller-exact-scheme.js';
import { receiptProvesPayment } from './settlement-proof.js';
import { transferWithAuthorizationArgs } from './transfer-authorization.js';

/** The SDK's reasons for the outcomes this settlement can have (`@x402/evm`'s error codes). */
const TRANSACTION_FAILED = 'invalid_exact_evm_transaction_failed';
const TRANSFER_EVENT_MISMATCH = 'invalid_exact_evm_transfer_event_mismatch';
const SETTLEMENT_PENDING = 'settlement_pending';

/**
 * Why the token refused the transfer (its revert reason; USDC's FiatToken and the test token
 * word them alike), as the SDK's reason for the same refusal.
 */
const TOKEN_REFUSALS: readonly (readonly [RegExp, string])[] = [
  [/authorization is used or canceled/i, 'invalid_exact_evm_nonce_already_used'],
  [/transfer amount exceeds balance/i, 'invalid_exact_evm_insufficient_balance'],
  [/authorization is expired/i, 'invalid_exact_evm_payload_authorization_valid_before'],
  [/authorization is not yet valid/i, 'invalid_exact_evm_payload_authorization_valid_after'],
  [/invalid signature/i, 'invalid_exact_evm_signature'],
];

/**
 * The SDK's `exact` facilitator for a seller settling its own payments, except that an EOA's
 * EIP-3009 transfer paying exactly the offer is settled without the SDK's checks running
 * again: the SDK re-verifies before it sends, with a pure-JS signature recovery (a fifth of the
 * server's busy time in a paid call) and a `getCode` of the payer. Here the offer's terms, the
 * validity window and the signer are checked locally, with native recovery (`verifiedLocally`,
 * the same checks the guard ran). The token itself refuses an unfunded, used or badly signed
 * transfer at gas estimation, before anything is sent, and the receipt must show the payment.
 * Everything else (a smart wallet's signature, a Permit2 payload, a payment that does not
 * match the offer, a builder-code suffix) is the SDK's, unchanged.
 */
export class SellerExactFacilitator implements SchemeNetworkFacilitator {
  readonly scheme = 'exact';
  readonly caipFamily = 'eip155:*';
  private readonly sdk: ExactEvmScheme;

  constructor(private readonly signer: FacilitatorEvmSigner) {
    this.sdk = new ExactEvmScheme(signer);
  }

  getExtra(network: Network): Record<string, unknown> | undefined {
    return this.sdk.getExtra(network);
  }

  getSigners(network: string): string[] {
    return this.sdk.getSigners(network);
  }

  verify(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    context?: FacilitatorContext,
  ): Promise<VerifyResponse> {
    return this.sdk.verify(payload, requirements, context);
  }

  settle(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    context?: FacilitatorContext,
  ): Promise<SettleResponse> {
    const paysTheOffer = verifiedLocally({ paymentPayload: payload, requirements }) !== undefined;
    if (!paysTheOffer || context?.getExtension(BUILDER_CODE_KEY) !== undefined) {
      return this.sdk.settle(payload, requirements, context);
    }
    return this.settleTransfer(payload, requirements);
  }

  private async settleTransfer(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
  ): Promise<SettleResponse> {
    const { authorization, signature } = exactEvmPayload(payload.payload);
    const answer = { network: requirements.network, payer: authorization.from };
    let transaction: Hex;
    try {
      transaction = await this.signer.writeContract({
        address: getAddress(requirements.asset),
        abi: eip3009ABI,
        functionName: 'transferWithAuthorization',
        args: transferWithAuthorizationArgs(authorization, signature),
      });
    } catch (error) {
      const errorMessage = messageOf(error);
      return {
        success: false,
        errorReason: refusalReason(errorMessage),
        errorMessage,
        transaction: '',
        ...answer,
      };
    }
    let receipt: Awaited<ReturnType<FacilitatorEvmSigner['waitForTransactionReceipt']>>;
    try {
      receipt = await this.signer.waitForTransactionReceipt({ hash: transaction });
    } catch (error) {
      const errorMessage = messageOf(error);
      return {
        success: false,
        errorReason: SETTLEMENT_PENDING,
        errorMessage,
        transaction,
        ...answer,
      };
    }
    if (receipt.status !== 'success') {
      return { success: false, errorReason: TRANSACTION_FAILED, transaction, ...answer };
    }
    const evidence = {
      status: 'success' as const,
      logs: (receipt.logs ?? []) as TransactionReceipt['logs'],
    };
    if (!receiptProvesPayment(evidence, { requirement: requirements, authorization })) {
      return { success: false, errorReason: TRANSFER_EVENT_MISMATCH, transaction, ...answer };
    }
    return { success: true, transaction, ...answer };
  }
}

/** The SDK's reason for a transfer refused before it was sent. */
export function refusalReason(message: string): string {
  return TOKEN_REFUSALS.find(([pattern]) => pattern.test(message))?.[1] ?? TRANSACTION_FAILED;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
