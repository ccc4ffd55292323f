import { createHash } from 'node:crypto';
import type { Channel, ChannelStorage } from '@x402/evm/batch-settlement/server';
import type { AcceptedBatchPayment } from './batch-acceptance.js';

/**
 * How long after its voucher was recorded a call whose answer was lost can be answered again
 * (LostAnswers): time for the service to come back and the buyer to retry. After it, the stored
 * answer is the only way back (24 h with REDIS_URL).
 */
export const LOST_ANSWER_WINDOW_MS = 10 * 60 * 1000;

/** The call a request pays for, when its buyer sent a payment-identifier. */
export interface PaidCall {
  readonly paymentId: string;
  /** What the id is bound to (PaymentIdentifiers' resource): a route and URL, or a tool call. */
  readonly resource: string;
}

/**
 * A paid call as the channel record keeps it (field `paidCall`): the resource as its sha-256 (a
 * URL's query can be long), and when it was charged.
 */
interface StampedCall {
  readonly paymentId: string;
  readonly resource: string;
  readonly at: number;
}

type StampedChannel = Channel & { paidCall?: StampedCall };

/**
 * Puts a voucher's payment-identifier into the channel record in the same atomic update that
 * records the voucher's charge (the SDK writes that update; the store given to the SDK is wrapped
 * by `stamping`). The answer is stored under its id only afterwards: should the service die in
 * between (kill -9, power), the record still proves that this voucher paid for this call under
 * this id, and a retry with that id gets an answer without paying again (LostAnswers).
 *
 * The stamp describes the charge the record holds: written by the request that charges it, kept
 * while a later request only reserves the channel (that stays a reservation, memory-only in the
 * file store), dropped when another charge is written without one or the charge is taken back.
 */
export class PaidCallStamps {
  /** Requests recording their voucher now, by the SDK's reservation id, with their call. */
  private readonly recording = new Map<string, PaidCall>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Runs `record` (the settlement of the request holding reservation `pendingId`) with `call`
   * stamped on the charge it writes. The stamp waits for `record` itself, not for a deadline the
   * caller may give up at: a late write is stamped too.
   */
  record<T>(
    pendingId: string | undefined,
    call: PaidCall | undefined,
    record: () => Promise<T>,
  ): Promise<T> {
    if (call === undefined || pendingId === undefined) return record();
    this.recording.set(pendingId, call);
    const recorded = record();
    void recorded
      .finally(() => {
        this.recording.delete(pendingId);
      })
      .catch(() => undefined);
    return recorded;
  }

  /** `storage`, whose updates keep the record's `paidCall` true to the charge it holds. */
  stamping(storage: ChannelStorage): ChannelStorage {
    return {
      get: (channelId) => storage.get(channelId),
      list: () => storage.list(),
      updateChannel: (channelId, update) =>
        storage.updateChannel(channelId, (current) => this.stamp(current, update(current))),
    };
  }

  /**
   * `next`, a charge written by the request holding reservation `pendingId`: with that request's
   * call stamped, or without a stamp (a charge recorded without an id).
   */
  stampCharge(pendingId: string | undefined, next: Channel): Channel {
    const call = pendingId === undefined ? undefined : this.recording.get(pendingId);
    if (call === undefined) return withoutPaidCall(next);
    const paidCall: StampedCall = {
      paymentId: call.paymentId,
      resource: digestOf(call.resource),
      at: this.now(),
    };
    return { ...next, paidCall } as Channel;
  }

  private stamp(current: Channel | undefined, rebuilt: Channel | undefined): Channel | undefined {
    if (rebuilt === undefined || rebuilt === current) return rebuilt;
    const next = carried(current, rebuilt, SERVICE_FIELDS);
    if (next.chargedCumulativeAmount !== current?.chargedCumulativeAmount) {
      // a charge the SDK writes (a deposit's, a voucher the facilitator checked): it names the
      // request holding the channel (chargedBy, as a locally checked voucher's charge does)
      // and carries that request's stamp
      const holder = current?.pendingRequest?.pendingId;
      const charged: Channel & { chargedBy?: string } = { ...next };
      if (holder === undefined) delete charged.chargedBy;
      else charged.chargedBy = holder;
      return this.stampCharge(holder, charged);
    }
    // the same charge: a reservation rebuilds the record without the fields describing it; they
    // stay (and the reservation stays memory-only in the file store)
    return carried(current, next, CHARGE_FIELDS);
  }
}

/** `next` with those of `fields` it lacks and `current` has, as `current` has them. */
function carried(current: Channel | undefined, next: Channel, fields: readonly string[]): Channel {
  if (current === undefined) return next;
  const kept = fields.filter((field) => field in current && !(field in next));
  if (kept.length === 0) return next;
  const copy: Record<string, unknown> = { ...next };
  for (const field of kept) copy[field] = (current as unknown as Record<string, unknown>)[field];
  return copy as unknown as Channel;
}

/**
 * The fields streams and claim rounds add to a record (stream-charges.ts, claim-marks.ts). The
 * SDK rebuilds a record from its own fields when it verifies or settles a deposit or a voucher;
 * these describe the channel whatever the SDK charges, so every rebuild keeps them. This
 * service's own writes set a field to `undefined` to drop it.
 */
const SERVICE_FIELDS = [
  'coverHigh',
  'claiming',
  'streamCharges',
  'lastStreamCharge',
  'lastStreamChargeId',
  'lastStreamLabel',
  'lastStreamContent',
  'lastStreamResent',
] as const;

/**
 * The fields this service adds to a channel record, both about its charged total: the paid call
 * (this file) and the request whose locally checked voucher set it (`chargedBy`, voucher-charges.ts).
 */
const CHARGE_FIELDS = ['paidCall', 'chargedBy'] as const;

/** The record without its stamp: its charge is no longer the stamped call's (a take-back). */
export function withoutPaidCall(channel: Channel): Channel {
  if (!('paidCall' in channel)) return channel;
  const unstamped: StampedChannel = { ...(channel as StampedChannel) };
  delete unstamped.paidCall;
  return unstamped;
}

/**
 * Whether `payment` is the channel's latest voucher, its charge recorded in full (not taken back)
 * for `call` within LOST_ANSWER_WINDOW_MS: then the call was sold, whatever became of its answer.
 */
export function soldFor(
  channel: Channel | undefined,
  payment: AcceptedBatchPayment,
  call: PaidCall,
  now = Date.now(),
): boolean {
  const paidCall = stampOf(channel);
  return (
    channel !== undefined &&
    paidCall !== undefined &&
    channel.signature.toLowerCase() === payment.signature.toLowerCase() &&
    channel.signedMaxClaimable === payment.maxClaimableAmount &&
    channel.chargedCumulativeAmount === payment.maxClaimableAmount &&
    paidCall.paymentId === call.paymentId &&
    paidCall.resource === digestOf(call.resource) &&
    now - paidCall.at <= LOST_ANSWER_WINDOW_MS
  );
}

function digestOf(resource: string): string {
  return createHash('sha256').update(resource).digest('hex');
}

function stampOf(channel: Channel | undefined): StampedCall | undefined {
  return channel === undefined ? undefined : (channel as StampedChannel).paidCall;
}
