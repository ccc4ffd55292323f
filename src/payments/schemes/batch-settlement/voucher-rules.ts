import type { AfterVerifyHook, VerifyResultContext } from '@x402/core/server';
import type { PaymentPayload } from '@x402/core/types';
import type { Channel, ChannelStorage } from '@x402/evm/batch-settlement/server';
import { isRecord } from '../../../common/json.js';
import { CUMULATIVE_MISMATCH, WITHDRAWAL_PENDING } from './batch-reasons.js';

type AfterVerifyResult = Awaited<ReturnType<AfterVerifyHook>>;

/**
 * This seller's rules for a voucher or deposit the facilitator (or the local check) found valid:
 * a channel whose payer started a timed withdrawal takes no new voucher, and a voucher must add
 * at least the price over what the chain shows already claimed (the channel is then recorded at
 * the claimed total, so the refusal carries it and the buyer's client resyncs from it).
 */
export async function refusalAfterVerify(
  context: VerifyResultContext,
  storage: ChannelStorage,
): Promise<AfterVerifyResult> {
  const { result, requirements } = context;
  const payload = context.paymentPayload as PaymentPayload;
  const raw = payload.payload;
  if (!result.isValid || !isRecord(raw) || (raw['type'] !== 'voucher' && raw['type'] !== 'deposit'))
    return undefined;
  const state = onChainState(result.extra);
  if (state === undefined) return undefined;
  if (state.withdrawRequestedAt > 0) {
    return {
      abort: true,
      reason: WITHDRAWAL_PENDING,
      message:
        'The payer started a withdrawal from this channel: it takes vouchers again once the withdrawal is finalized; or pay from a new channel',
    };
  }
  const voucher = raw['voucher'] as VoucherFields;
  const signed = BigInt(voucher.maxClaimableAmount);
  if (signed - BigInt(requirements.amount) >= state.totalClaimed) return undefined;
  // Recorded at the claimed total, so the refusal carries it (the SDK reads the record when it
  // explains a mismatch) and the next voucher is checked against it. The signature is the
  // buyer's own: its client accepts a correction that signature covers.
  const claimed = state.totalClaimed.toString();
  await storage.updateChannel(voucher.channelId, (current) => {
    if (current === undefined) {
      return {
        channelId: voucher.channelId,
        channelConfig: raw['channelConfig'] as Channel['channelConfig'],
        chargedCumulativeAmount: claimed,
        signedMaxClaimable: voucher.maxClaimableAmount,
        signature: voucher.signature,
        balance: state.balance.toString(),
        totalClaimed: claimed,
        withdrawRequestedAt: state.withdrawRequestedAt,
        refundNonce: state.refundNonce,
        onchainSyncedAt: Date.now(),
        lastRequestTimestamp: Date.now(),
      };
    }
    if (BigInt(current.chargedCumulativeAmount) >= state.totalClaimed) return current;
    return { ...current, chargedCumulativeAmount: claimed, totalClaimed: claimed };
  });
  return {
    abort: true,
    reason: CUMULATIVE_MISMATCH,
    message: `The voucher adds less than the price to the ${state.totalClaimed} already claimed on chain`,
  };
}

export interface VoucherFields {
  readonly channelId: string;
  readonly maxClaimableAmount: string;
  readonly signature: string;
}

interface OnChainState {
  readonly balance: bigint;
  readonly totalClaimed: bigint;
  readonly withdrawRequestedAt: number;
  readonly refundNonce: number;
}

/** The channel's on-chain state a verification reports (the facilitator's read, or the record's). */
function onChainState(extra: unknown): OnChainState | undefined {
  if (!isRecord(extra)) return undefined;
  const { balance, totalClaimed, withdrawRequestedAt, refundNonce } = extra;
  if (typeof balance !== 'string' || typeof totalClaimed !== 'string') return undefined;
  if (!/^\d+$/.test(balance) || !/^\d+$/.test(totalClaimed)) return undefined;
  const requested = Number(withdrawRequestedAt ?? 0);
  const nonce = Number(refundNonce ?? 0);
  return {
    balance: BigInt(balance),
    totalClaimed: BigInt(totalClaimed),
    withdrawRequestedAt: Number.isFinite(requested) ? requested : 0,
    refundNonce: Number.isSafeInteger(nonce) ? nonce : 0,
  };
}

/** `eip155:84532` → 84532. */
export function chainIdOf(network: string): number {
  return Number(network.slice(network.indexOf(':') + 1));
}
