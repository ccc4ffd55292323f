import type { Channel, ChannelStorage } from '@x402/evm/batch-settlement/server';
import {
  CHANNEL_BUSY,
  CUMULATIVE_EXCEEDS_BALANCE,
  CUMULATIVE_MISMATCH,
  MISSING_CHANNEL,
  WITHDRAWAL_PENDING,
} from './batch-reasons.js';
import { isReserved } from './channel-reservation.js';
import { claimFloorOf } from './claim-marks.js';
import { withoutPaidCall } from './paid-calls.js';

/**
 * A metered sale on a channel (a price stream): the buyer's voucher raises the channel's cover
 * (`signedMaxClaimable` with its signature) and charges nothing; each update delivered is one
 * atomic write `charged + unit ≤ cover` on the record. Claims keep reading the charged total
 * with the signature over the cover, so the unspent cover is never claimed.
 */

/** The record as a stream charge leaves it: the charged total after the channel's last stream charge. */
export type StreamChannel = Channel & {
  lastStreamCharge?: string;
  /** That charge's own id. */
  lastStreamChargeId?: string;
  /** What the last stream charge paid for (a symbol's update), when its sale said. */
  lastStreamLabel?: string;
  /** What that charge delivered, kept to re-send it once, free, to a reconnect that missed it. */
  lastStreamContent?: string;
  /** Set once that content went out again: a charge is re-sent at most once. */
  lastStreamResent?: boolean;
  /** The ids of the latest stream charges (newest last): a take-back removes exactly its own. */
  streamCharges?: readonly string[];
  /** The highest cover a stream voucher ever raised it to: a stream needs a voucher above it. */
  coverHigh?: string;
  chargedBy?: string;
};

/** How many stream charge ids a record keeps: far more than charges waiting on one write. */
const KEPT_CHARGE_IDS = 64;

/** One stream charge: the cumulative after it (its event id) and its own id. */
export interface StreamCharge {
  readonly cumulative: string;
  readonly id: string;
}

/** What a charge paid for (`label`) and delivered (`content`), kept with it in the record. */
export interface ChargedItem {
  readonly label: string;
  readonly content: string;
}

/** The last stream charge, to re-send free: its cumulative and what it delivered. */
export interface KeptCharge extends ChargedItem {
  readonly cumulative: string;
}

/** The cumulative of the channel's last stream charge, if its record still holds one. */
export function lastStreamChargeOf(channel: Channel | undefined): string | undefined {
  const last: unknown = (channel as Record<string, unknown> | undefined)?.['lastStreamCharge'];
  return typeof last === 'string' ? last : undefined;
}

/** What the channel's last stream charge paid for, if its record still says. */
export function lastStreamLabelOf(channel: Channel | undefined): string | undefined {
  const label: unknown = (channel as Record<string, unknown> | undefined)?.['lastStreamLabel'];
  return typeof label === 'string' ? label : undefined;
}

function streamChargesOf(channel: Channel): readonly string[] {
  const ids: unknown = (channel as StreamChannel).streamCharges;
  return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
}

/** A voucher raising a channel's cover: its signed cumulative maximum over the charged `base`. */
export interface CoverVoucher {
  readonly base: string;
  readonly maxClaimableAmount: string;
  readonly signature: string;
}

export type CoverOutcome =
  | { readonly status: 'raised'; readonly channel: Channel }
  | { readonly status: 'refused'; readonly reason: string };

/**
 * The record with `voucher` as its cover, or why not. It must sign exactly the charged total it
 * was checked against plus its budget (the record moved on since → a cumulative mismatch), and
 * more than any cover the channel had: a voucher once a cover is public after a claim round puts
 * it on chain, so only a fresh signature proves the payer's key (a stream, a reconnect).
 */
export function coverOn(
  current: Channel | undefined,
  voucher: CoverVoucher,
  now: number,
): { outcome: CoverOutcome; next: Channel | undefined } {
  const refused = (reason: string) => ({
    outcome: { status: 'refused', reason } as const,
    next: current,
  });
  if (current === undefined) return refused(MISSING_CHANNEL);
  const signed = BigInt(voucher.maxClaimableAmount);
  const charged = BigInt(current.chargedCumulativeAmount);
  if (signed <= charged) {
    return refused(`${VOUCHER_SPENT}: ${signed} is not above the ${charged} already charged`);
  }
  const high = coverHighOf(current);
  if (signed <= high) {
    return refused(
      `${VOUCHER_SPENT}: a stream needs a new voucher above the ${high} the channel was covered for; ` +
        `sign ${charged} plus a budget over ${high - charged}`,
    );
  }
  if (isReserved(current, now)) return refused(CHANNEL_BUSY);
  if (current.chargedCumulativeAmount !== voucher.base) {
    return refused(
      `${CUMULATIVE_MISMATCH}: the channel's charged total is ${charged}; sign ${charged} plus the budget`,
    );
  }
  if (signed > BigInt(current.balance)) {
    return refused(
      `${CUMULATIVE_EXCEEDS_BALANCE}: the voucher signs ${signed}, the channel holds ${current.balance}`,
    );
  }
  if (current.withdrawRequestedAt > 0) return refused(WITHDRAWAL_PENDING);
  const next: StreamChannel = {
    ...current,
    signedMaxClaimable: voucher.maxClaimableAmount,
    signature: voucher.signature,
    coverHigh: voucher.maxClaimableAmount,
    lastRequestTimestamp: now,
  };
  return { outcome: { status: 'raised', channel: next }, next };
}

/** The highest cover the channel had: its current one, or a higher one since lowered. */
function coverHighOf(channel: Channel): bigint {
  const high = (channel as StreamChannel).coverHigh;
  const current = BigInt(channel.signedMaxClaimable);
  return typeof high === 'string' && BigInt(high) > current ? BigInt(high) : current;
}

/** A voucher already charged in full (or below what is charged): it pays for nothing more. */
export const VOUCHER_SPENT = 'stream_voucher_spent';

export type StreamChargeOutcome =
  | { readonly status: 'charged'; readonly cumulative: string; readonly channel: Channel }
  | { readonly status: 'exhausted'; readonly channel: Channel }
  | { readonly status: 'busy' }
  | { readonly status: 'refused'; readonly reason: string };

/**
 * One update's charge on the record: the unit added to the charged total if the cover and the
 * balance allow it, with the new total kept as the channel's last stream charge and `chargeId`
 * (unique per charge) among the record's recent stream charges. Nothing is
 * charged on a channel another request holds, whose payer started a withdrawal, or gone.
 */
export function streamChargeOn(
  current: Channel | undefined,
  unit: bigint,
  chargeId: string,
  now: number,
  item?: ChargedItem,
): { outcome: StreamChargeOutcome; next: Channel | undefined } {
  if (current === undefined) {
    return { outcome: { status: 'refused', reason: MISSING_CHANNEL }, next: current };
  }
  if (isReserved(current, now)) return { outcome: { status: 'busy' }, next: current };
  if (current.withdrawRequestedAt > 0) {
    return { outcome: { status: 'refused', reason: WITHDRAWAL_PENDING }, next: current };
  }
  const charged = BigInt(current.chargedCumulativeAmount) + unit;
  if (charged > BigInt(current.signedMaxClaimable) || charged > BigInt(current.balance)) {
    return { outcome: { status: 'exhausted', channel: current }, next: current };
  }
  const cumulative = charged.toString();
  const next: StreamChannel = {
    ...withoutPaidCall(current),
    chargedCumulativeAmount: cumulative,
    lastStreamCharge: cumulative,
    lastStreamChargeId: chargeId,
    lastStreamLabel: item?.label,
    lastStreamContent: item?.content,
    lastStreamResent: undefined,
    streamCharges: [...streamChargesOf(current), chargeId].slice(-KEPT_CHARGE_IDS),
    chargedBy: chargeId,
    lastRequestTimestamp: now,
  };
  return { outcome: { status: 'charged', cumulative, channel: next }, next };
}

/** One atomic, durable write of an update's charge (the store's own update: journal or Redis). */
export async function chargeStreamUpdate(
  storage: ChannelStorage,
  channelId: string,
  unit: bigint,
  chargeId: string,
  item?: ChargedItem,
): Promise<StreamChargeOutcome> {
  let outcome: StreamChargeOutcome = { status: 'refused', reason: MISSING_CHANNEL };
  await storage.updateChannel(channelId, (current) => {
    // decided afresh on every run: a store may run this again when its write races another
    const decided = streamChargeOn(current, unit, chargeId, Date.now(), item);
    outcome = decided.outcome;
    return decided.next;
  });
  return outcome;
}

/**
 * The last stream charge to re-send to a reconnect that saw only up to `seen`, marked re-sent in
 * the same write, or nothing: no charge after `seen`, none kept, one re-sent already, or one
 * for a label the new stream does not serve.
 */
export function resendOn(
  current: Channel | undefined,
  seen: bigint,
  labels: readonly string[],
): { outcome: KeptCharge | undefined; next: Channel | undefined } {
  const kept: StreamChannel | undefined = current;
  const { lastStreamCharge, lastStreamLabel, lastStreamContent } = kept ?? {};
  if (
    kept === undefined ||
    lastStreamCharge === undefined ||
    lastStreamLabel === undefined ||
    lastStreamContent === undefined ||
    kept.lastStreamResent === true ||
    BigInt(lastStreamCharge) <= seen ||
    !labels.includes(lastStreamLabel)
  ) {
    return { outcome: undefined, next: current };
  }
  const next: StreamChannel = { ...kept, lastStreamResent: true };
  return {
    outcome: { cumulative: lastStreamCharge, label: lastStreamLabel, content: lastStreamContent },
    next,
  };
}

/** One atomic write taking the last stream charge for its one free re-send (resendOn). */
export async function takeResend(
  storage: ChannelStorage,
  channelId: string,
  seen: bigint,
  labels: readonly string[],
): Promise<KeptCharge | undefined> {
  let outcome: KeptCharge | undefined;
  await storage.updateChannel(channelId, (current) => {
    const decided = resendOn(current, seen, labels);
    outcome = decided.outcome;
    return decided.next;
  });
  return outcome;
}

/** One atomic write of a cover (coverOn). */
export async function raiseCover(
  storage: ChannelStorage,
  channelId: string,
  voucher: CoverVoucher,
): Promise<CoverOutcome> {
  let outcome: CoverOutcome = { status: 'refused', reason: MISSING_CHANNEL };
  await storage.updateChannel(channelId, (current) => {
    const decided = coverOn(current, voucher, Date.now());
    outcome = decided.outcome;
    return decided.next;
  });
  return outcome;
}

export type TakeBackOutcome = 'taken' | 'claimed' | 'delivered' | 'gone' | 'busy';

/**
 * The record without the stream charge `charge` (its update was never written to the buyer), or
 * why not: a claim round took it on chain or is taking it, on any instance ('claimed': the
 * charge stays, its update is re-sent free on a reconnect), the record no longer holds that
 * charge (`gone`: replaced, or it was taken back already), or the record is held ('busy': the
 * caller retries), or its update already went out as a reconnect's free re-send ('delivered':
 * the charge stays). Charges made on top since stay: the total goes down by one unit; the last
 * stream charge goes back with it when it was this one.
 */
export function takeBackOn(
  current: Channel | undefined,
  charge: StreamCharge,
  unit: bigint,
  now: number,
): { outcome: TakeBackOutcome; next: Channel | undefined } {
  const ids = current === undefined ? [] : streamChargesOf(current);
  if (current === undefined || !ids.includes(charge.id)) return { outcome: 'gone', next: current };
  if (isReserved(current, now)) return { outcome: 'busy', next: current };
  const last = current as StreamChannel;
  if (last.lastStreamChargeId === charge.id && last.lastStreamResent === true) {
    return { outcome: 'delivered', next: current };
  }
  const charged = BigInt(current.chargedCumulativeAmount) - unit;
  // a claim in flight on any instance may put the total it read on chain: never below it
  if (charged < claimFloorOf(current, now)) return { outcome: 'claimed', next: current };
  const next: StreamChannel = {
    ...current,
    chargedCumulativeAmount: charged.toString(),
    streamCharges: ids.filter((id) => id !== charge.id),
    // the charge before it paid for something this record does not keep
    ...((current as StreamChannel).lastStreamChargeId === charge.id
      ? {
          lastStreamCharge: charged.toString(),
          lastStreamChargeId: undefined,
          lastStreamLabel: undefined,
          lastStreamContent: undefined,
          lastStreamResent: undefined,
        }
      : {}),
    // an expired reservation still in the record could commit on the lowered total: void it
    pendingRequest: undefined,
  };
  return { outcome: 'taken', next };
}

const TAKE_BACK_RETRY_MS = 100;
const TAKE_BACK_WAIT_MS = 30_000;

/**
 * Takes an undelivered update's charge back, once no request holds the channel (bounded); never
 * under what a claim round in flight, on any instance, claims (claim-marks.ts).
 */
export async function takeBackStreamCharge(
  storage: ChannelStorage,
  channelId: string,
  charge: StreamCharge,
  unit: bigint,
): Promise<TakeBackOutcome> {
  for (const until = Date.now() + TAKE_BACK_WAIT_MS; ;) {
    let outcome = 'gone' as TakeBackOutcome;
    await storage.updateChannel(channelId, (current) => {
      const decided = takeBackOn(current, charge, unit, Date.now());
      outcome = decided.outcome;
      return decided.next;
    });
    if (outcome !== 'busy' || Date.now() > until) return outcome;
    await new Promise((resolve) => setTimeout(resolve, TAKE_BACK_RETRY_MS));
  }
}
