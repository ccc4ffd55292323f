import type { PendingSettlementStore } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import {
  BATCH_SETTLEMENT_ADDRESS,
  type BatchSettlementDepositPayload,
  type FacilitatorEvmSigner,
} from '@x402/evm';
import type { Hex } from 'viem';
import { DEPOSIT_ABI } from './deposit-abi.js';
import { channelState, depositArgs, type ChannelChainState } from './deposit-verification.js';

/** The SDK's reasons, as its own deposit settlement gives them. */
const DEPOSIT_TRANSACTION_FAILED = 'invalid_batch_settlement_evm_deposit_transaction_failed';
const SETTLEMENT_PENDING = 'settlement_pending';
const TRANSACTION_STATE = 'invalid_transaction_state';
/** How long, and how often, the channel's balance is read after the receipt until it shows the deposit. */
const STATE_POLL_MS = 2000;
const STATE_POLL_INTERVAL_MS = 150;
/** The SDK keeps an error message to this many characters. */
const MAX_MESSAGE = 500;

/**
 * Settles a deposit proven valid a moment ago by provenDeposit (`before`: the channel's state it
 * read, again for this settlement): the channel contract's `deposit` sent from the settling account, its
 * receipt awaited, and the channel's state read once it shows the deposit. The SDK's deposit
 * settlement, step for step and with its answers and reasons, without verifying the deposit a
 * second time with pure-JS recoveries and a read of the payer's code: a transaction sent and not
 * confirmed is answered `settlement_pending` and kept in `pending` (under the authorization's
 * signature) for the SDK to reconcile on the next try; a reverted one is a failed deposit.
 */
export async function settleVerifiedDeposit(
  signer: FacilitatorEvmSigner,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
  before: ChannelChainState,
  pending: PendingSettlementStore,
  dataSuffix: Hex | undefined,
): Promise<SettleResponse> {
  const raw = payload.payload as unknown as BatchSettlementDepositPayload;
  const { network } = requirements;
  const payer = raw.channelConfig.payer;
  const key = raw.deposit.authorization.erc3009Authorization?.signature ?? '';
  const failed = (reason: string, error: unknown, transaction = ''): SettleResponse => ({
    success: false,
    errorReason: reason,
    errorMessage: messageOf(error),
    transaction,
    network,
    payer,
  });
  let transaction: Hex;
  try {
    transaction = await signer.writeContract({
      address: BATCH_SETTLEMENT_ADDRESS,
      abi: DEPOSIT_ABI,
      functionName: 'deposit',
      args: depositArgs(raw),
      ...(dataSuffix === undefined ? {} : { dataSuffix }),
    });
  } catch (error) {
    return failed(DEPOSIT_TRANSACTION_FAILED, error);
  }
  let status: string;
  try {
    ({ status } = await signer.waitForTransactionReceipt({ hash: transaction }));
  } catch (error) {
    try {
      await pending.set(key, transaction);
    } catch (storeError) {
      return failed(
        TRANSACTION_STATE,
        `settlement_pending, but failed to persist for retry: ${messageOf(storeError)}`,
        transaction,
      );
    }
    return failed(SETTLEMENT_PENDING, error, transaction);
  }
  await pending.delete(key).catch(() => undefined);
  if (status !== 'success') {
    return {
      success: false,
      errorReason: DEPOSIT_TRANSACTION_FAILED,
      transaction,
      network,
      payer,
    };
  }
  const expected = before.balance + BigInt(raw.deposit.amount);
  let channel = {
    channelId: raw.voucher.channelId,
    balance: expected.toString(),
    totalClaimed: before.totalClaimed.toString(),
    withdrawRequestedAt: before.withdrawRequestedAt,
    refundNonce: before.refundNonce.toString(),
  };
  const after = await stateShowing(signer, raw, requirements.asset, expected);
  if (after !== undefined) {
    channel = {
      channelId: raw.voucher.channelId,
      balance: after.balance.toString(),
      totalClaimed: after.totalClaimed.toString(),
      withdrawRequestedAt: after.withdrawRequestedAt,
      refundNonce: after.refundNonce.toString(),
    };
  }
  return {
    success: true,
    transaction,
    network,
    payer,
    amount: raw.deposit.amount,
    extra: { channelState: channel },
  };
}

/** The channel's state once its balance shows `expected` (RPC nodes lag a receipt); else undefined. */
async function stateShowing(
  signer: FacilitatorEvmSigner,
  raw: BatchSettlementDepositPayload,
  token: string,
  expected: bigint,
): Promise<Awaited<ReturnType<typeof channelState>>> {
  const deadline = Date.now() + STATE_POLL_MS;
  const read = () =>
    channelState(signer, raw.voucher.channelId, token, raw.channelConfig.payer).catch(
      () => undefined,
    );
  let state = await read();
  while (state !== undefined && state.balance < expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, STATE_POLL_INTERVAL_MS));
    state = await read();
  }
  return state !== undefined && state.balance >= expected ? state : undefined;
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, MAX_MESSAGE);
}
