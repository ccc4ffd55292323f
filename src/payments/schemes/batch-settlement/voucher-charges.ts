import type { Channel, ChannelStorage } from '@x402/evm/batch-settlement/server';
import { isReserved } from './channel-reservation.js';

/** The SDK's reasons, for a charge refused on a record that changed since its voucher's check. */
const CUMULATIVE_EXCEEDS_BALANCE = 'invalid_batch_settlement_evm_cumulative_exceeds_balance';
const WITHDRAWAL_PENDING = 'invalid_batch_settlement_evm_withdrawal_pending';

/**
 * A voucher checked locally against its channel's record (SellerBatchScheme), to be charged when
 * its call is answered: its cumulative amount is exactly one price over the charged total it was
 * checked against.
 */
export interface VoucherCharge {
  /** The request's own id (its SDK request context's), written with the charge as `chargedBy`. */
  readonly id: string;
  readonly channelId: string;
  /** The charged total the voucher was checked against. */
  readonly base: string;
  /** The voucher's signed cumulative amount: the charged total once it is committed. */
  readonly charged: string;
  readonly signature: string;
  /** The record as it will be written: with or without the call's stamp (PaidCallStamps). */
  readonly stamped: (next: Channel) => Channel;
}

export type ChargeOutcome =
  | { readonly status: 'committed'; readonly previous: Channel }
  | { readonly status: 'stale' | 'busy'; readonly channel: Channel }
  | { readonly status: 'refused'; readonly reason: string }
  | { readonly status: 'missing' };

/** A record's `chargedBy`: the request whose locally checked voucher set its charged total. */
export function chargedBy(channel: Channel | undefined): string | undefined {
  return channel === undefined ? undefined : (channel as { chargedBy?: string }).chargedBy;
}

/** A store that writes a record only if it is still exactly the one read (Redis: one script). */
export interface ComparingChannelStorage extends ChannelStorage {
  replaceIfUnchanged(seen: Channel, next: Channel): Promise<boolean>;
}

/**
 * The record with `charge` committed, or why not: still at the base the voucher was checked
 * against and held by no request (a refund's hold included). Nothing is reserved before the
 * handler runs: two vouchers on the same base may both be answered by their handlers, and the
 * second to commit finds the record moved on (stale): refused, nothing charged.
 */
export function chargeOn(
  current: Channel | undefined,
  charge: VoucherCharge,
  now: number,
): { outcome: ChargeOutcome; next: Channel | undefined } {
  if (current === undefined) return { outcome: { status: 'missing' }, next: current };
  if (isReserved(current, now))
    return { outcome: { status: 'busy', channel: current }, next: current };
  if (current.chargedCumulativeAmount !== charge.base) {
    return { outcome: { status: 'stale', channel: current }, next: current };
  }
  // checked at the voucher's check already; again here, on the record the charge is written to
  if (BigInt(charge.charged) > BigInt(current.balance)) {
    return { outcome: { status: 'refused', reason: CUMULATIVE_EXCEEDS_BALANCE }, next: current };
  }
  if (current.withdrawRequestedAt > 0) {
    return { outcome: { status: 'refused', reason: WITHDRAWAL_PENDING }, next: current };
  }
  const next = charge.stamped({
    ...current,
    chargedBy: charge.id,
    chargedCumulativeAmount: charge.charged,
    signedMaxClaimable: charge.charged,
    signature: charge.signature,
    lastRequestTimestamp: now,
    pendingRequest: undefined, // an expired reservation, voided
  } as Channel);
  return { outcome: { status: 'committed', previous: current }, next };
}

/**
 * Commits `charge`: one compare-and-set against `seen` (the record the voucher was checked
 * against) where the store has one and nothing changed since, else one update of the record as
 * it is now. Either way one atomic write.
 */
export async function commitCharge(
  storage: ChannelStorage,
  charge: VoucherCharge,
  seen: Channel | undefined,
): Promise<ChargeOutcome> {
  if (seen !== undefined && isComparing(storage)) {
    const { outcome, next } = chargeOn(seen, charge, Date.now());
    if (
      outcome.status === 'committed' &&
      next !== undefined &&
      (await storage.replaceIfUnchanged(seen, next))
    ) {
      return outcome;
    }
  }
  let outcome: ChargeOutcome = { status: 'missing' };
  await storage.updateChannel(charge.channelId, (current) => {
    // decided afresh on every run: a store may run this again when its write races another
    const decided = chargeOn(current, charge, Date.now());
    outcome = decided.outcome;
    return decided.next;
  });
  return outcome;
}

/**
 * The channel state a voucher's receipt carries (`extra.channelState`, as the SDK's clients read
 * it): the record's on-chain state and the charged total with this voucher.
 */
export function channelState(channel: Channel, chargedCumulativeAmount: string): object {
  return {
    channelId: channel.channelId,
    balance: channel.balance,
    totalClaimed: channel.totalClaimed,
    withdrawRequestedAt: channel.withdrawRequestedAt,
    refundNonce: String(channel.refundNonce),
    chargedCumulativeAmount,
  };
}

function isComparing(storage: ChannelStorage): storage is ComparingChannelStorage {
  return 'replaceIfUnchanged' in storage;
}
