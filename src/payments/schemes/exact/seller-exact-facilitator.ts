import type {
  FacilitatorContext,
  Network,
  PaymentPayload,
  PaymentRequirements,
  SchemeNetworkFacilitator,
  SettleResponse,
  VerifyResponse,
} from '@x402/core/types';
import { InMemoryPendingSettlementStore } from '@x402/core/facilitator';
import {
  BUILDER_CODE_KEY,
  eip3009ABI,
  startAssetContractCheck,
  type FacilitatorEvmSigner,
} from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { getAddress, type Hex, type TransactionReceipt } from 'viem';
import type { AcceptedPayment } from './payment-acceptance.js';
import { exactAuthorization, verifiedLocally } from './seller-exact-scheme.js';
import { receiptProvesPayment } from '../../../chain/settlement-proof.js';
import { transferWithAuthorizationArgs } from '../../../chain/eip3009-authorization.js';

/** The SDK's reasons for the outcomes this settlement can have (`@x402/evm`'s error codes). */
const TRANSACTION_FAILED = 'invalid_exact_evm_transaction_failed';
const TRANSFER_EVENT_MISMATCH = 'invalid_exact_evm_transfer_event_mismatch';
const SETTLEMENT_PENDING = 'settlement_pending';

/**
 * Why the token refused the transfer, as the SDK's reason for the same refusal: USDC's FiatToken
 * and the test token revert with these words, newer tokens with these custom errors.
 */
const TOKEN_REFUSALS: readonly (readonly [RegExp, string])[] = [
  [
    /authorization is used|AuthorizationUsedOrCanceled|AuthorizationAlreadyUsed/i,
    'invalid_exact_evm_nonce_already_used',
  ],
  [
    /exceeds balance|insufficient balance|ERC20InsufficientBalance/i,
    'invalid_exact_evm_insufficient_balance',
  ],
  [
    /authorization is expired|AuthorizationExpired/i,
    'invalid_exact_evm_payload_authorization_valid_before',
  ],
  [
    /authorization is not yet valid|AuthorizationNotYetValid/i,
    'invalid_exact_evm_payload_authorization_valid_after',
  ],
  [/invalid signature|InvalidSignature|SignerMismatch/i, 'invalid_exact_evm_signature'],
];

/**
 * The SDK's `exact` facilitator for a seller settling its own payments, except that an EOA's
 * EIP-3009 transfer paying exactly the offer is settled without the SDK's checks running
 * again: the SDK re-verifies before it sends, with a pure-JS signature recovery (a fifth of the
 * server's busy time in a paid call) and a `getCode` of the payer. Here the offer's terms, the
 * validity window and the signer are checked locally, with native recovery (`verifiedLocally`,
 * the same checks the guard ran), and the token address must hold code (the SDK's cached
 * check). The token itself refuses an unfunded, used or badly signed transfer at gas
 * estimation, before anything is sent (a payer with code, an EIP-7702 account say, is checked
 * by the token's own rules), and the receipt must show the payment. Everything else (a smart
 * wallet's signature, a Permit2 payload, a payment that does not match the offer, a
 * builder-code suffix) is the SDK's, unchanged.
 */
export class SellerExactFacilitator implements SchemeNetworkFacilitator {
  readonly scheme = 'exact';
  readonly caipFamily = 'eip155:*';
  private readonly sdk: ExactEvmScheme;
  /** Transactions sent whose receipt did not come in time, by `pendingKey`. */
  private readonly pending = new InMemoryPendingSettlementStore();

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

  async settle(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    context?: FacilitatorContext,
  ): Promise<SettleResponse> {
    const transfer = exactAuthorization(payload.payload);
    // The resource server asks once more after a pending answer: the transaction sent is awaited,
    // whichever way it went and however little of the authorization's validity is left by now.
    const sent = transfer && (await this.pending.get(pendingKey(transfer)));
    if (transfer !== undefined && sent !== undefined) {
      await this.pending.delete(pendingKey(transfer));
      return this.confirmed(sent as Hex, requirements, transfer);
    }
    const ours = transfer !== undefined && paysTheOffer(payload, requirements);
    if (!ours || context?.getExtension(BUILDER_CODE_KEY) !== undefined) {
      return this.sdk.settle(payload, requirements, context);
    }
    const { authorization, signature } = transfer;
    const answer = { network: requirements.network, payer: authorization.from };
    // what the SDK checks before sending: a token address without code "executes" any transfer
    const notAToken = await startAssetContractCheck(
      this.signer,
      requirements.network,
      requirements.asset,
    ).await();
    if (notAToken !== '') {
      return { success: false, errorReason: notAToken, transaction: '', ...answer };
    }
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
      const errorReason = refusalReason(errorMessage);
      return { success: false, errorReason, errorMessage, transaction: '', ...answer };
    }
    return this.confirmed(transaction, requirements, transfer);
  }

  /** The settlement of a sent transfer: its receipt must show the payment. */
  private async confirmed(
    transaction: Hex,
    requirements: PaymentRequirements,
    { authorization, signature }: Pick<AcceptedPayment, 'authorization' | 'signature'>,
  ): Promise<SettleResponse> {
    const answer = { network: requirements.network, payer: authorization.from, transaction };
    let receipt: Awaited<ReturnType<FacilitatorEvmSigner['waitForTransactionReceipt']>>;
    try {
      receipt = await this.signer.waitForTransactionReceipt({ hash: transaction });
    } catch (error) {
      await this.pending.set(pendingKey({ authorization, signature }), transaction);
      return {
        success: false,
        errorReason: SETTLEMENT_PENDING,
        errorMessage: messageOf(error),
        ...answer,
      };
    }
    if (receipt.status !== 'success') {
      return { success: false, errorReason: TRANSACTION_FAILED, ...answer };
    }
    const evidence = {
      status: 'success' as const,
      logs: (receipt.logs ?? []) as TransactionReceipt['logs'],
    };
    if (!receiptProvesPayment(evidence, { requirement: requirements, authorization })) {
      return { success: false, errorReason: TRANSFER_EVENT_MISMATCH, ...answer };
    }
    return { success: true, ...answer };
  }
}

/**
 * A sent transfer's place in the pending store: its signature and the payer and nonce it
 * authorizes, so that another authorization carrying the same signature bytes (a contract
 * payer's) cannot take it over.
 */
function pendingKey({
  authorization,
  signature,
}: Pick<AcceptedPayment, 'authorization' | 'signature'>): string {
  return [signature, authorization.from, authorization.nonce].join('|').toLowerCase();
}

/** Whether the payment is an EOA's and pays exactly the offer now (`verifiedLocally`). */
function paysTheOffer(payload: PaymentPayload, requirements: PaymentRequirements): boolean {
  try {
    return verifiedLocally({ paymentPayload: payload, requirements }) !== undefined;
  } catch {
    // an offer the local check does not read: the SDK's checks give the precise reason
    return false;
  }
}

/** The SDK's reason for a transfer refused before it was sent. */
export function refusalReason(message: string): string {
  return TOKEN_REFUSALS.find(([pattern]) => pattern.test(message))?.[1] ?? TRANSACTION_FAILED;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
