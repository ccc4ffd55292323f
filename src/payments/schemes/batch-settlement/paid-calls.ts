import type { Channel, ChannelStorage } from '@x402/evm/batch-settlement/server';
import type { AcceptedBatchPayment } from './batch-acceptance.js';

/**
 * The call a channel's latest voucher paid for, when the buyer sent a payment-identifier: kept in
 * the channel record (field `paidCall`) by the very write that records the voucher.
 */
export interface PaidCall {
  readonly paymentId: string;
  /** What the id is bound to (PaymentIdentifiers' resource): a route, or a tool call. */
  readonly resource: string;
}

type ChannelWithPaidCall = Channel & { readonly paidCall?: PaidCall };

/**
 * Puts a voucher's payment-identifier into the channel record in the same atomic update that
 * records the voucher's charge (the SDK writes that update; the store given to the SDK is wrapped
 * by `stamping`). The answer the call bought is stored under its id only afterwards: should the
 * service die in between (kill -9, power), the record still proves that this voucher paid for
 * this call under this id, and a retry with that id gets an answer without paying again
 * (LostAnswers). A record whose latest voucher came without an id carries no `paidCall`.
 */
export class PaidCallStamps {
  /** Vouchers being recorded now, by signature (lower case), with the call each pays for. */
  private readonly recording = new Map<string, PaidCall>();

  /**
   * Runs `record` (the settlement that records the voucher signed `signature`) with `call`
   * stamped on the record it writes. The stamp waits for `record` itself, not for a deadline
   * the caller may give up at: a late write is stamped too.
   */
  record<T>(signature: string, call: PaidCall | undefined, record: () => Promise<T>): Promise<T> {
    if (call === undefined) return record();
    const key = signature.toLowerCase();
    this.recording.set(key, call);
    const recorded = record();
    void recorded
      .finally(() => {
        if (this.recording.get(key) === call) this.recording.delete(key);
      })
      .catch(() => undefined);
    return recorded;
  }

  /** `storage`, whose updates that record a new voucher carry that voucher's paid call (or none). */
  stamping(storage: ChannelStorage): ChannelStorage {
    return {
      get: (channelId) => storage.get(channelId),
      list: () => storage.list(),
      updateChannel: (channelId, update) =>
        storage.updateChannel(channelId, (current) => this.stamp(current, update(current))),
    };
  }

  private stamp(current: Channel | undefined, next: Channel | undefined): Channel | undefined {
    if (next === undefined || next === current) return next;
    // the voucher being recorded (its reservation wrote its signature already; this is its charge)
    const call =
      this.recording.size === 0 ? undefined : this.recording.get(next.signature.toLowerCase());
    if (call !== undefined) return { ...next, paidCall: call } as Channel;
    // the same voucher (a claim, a take-back), or a record without a stamp: left as it is
    if (next.signature === current?.signature || !('paidCall' in next)) return next;
    // another voucher: the previous one's stamp, carried over by the SDK's spread, goes
    const unstamped: { paidCall?: PaidCall } & Channel = { ...(next as ChannelWithPaidCall) };
    delete unstamped.paidCall;
    return unstamped;
  }
}

/**
 * Whether `payment` is the channel's latest voucher, its charge recorded in full (not taken back)
 * and paid for `call`: then the call was sold, whatever became of its answer.
 */
export function soldFor(
  channel: Channel | undefined,
  payment: AcceptedBatchPayment,
  call: PaidCall,
): boolean {
  if (channel === undefined) return false;
  const { paidCall } = channel as ChannelWithPaidCall;
  return (
    channel.signature.toLowerCase() === payment.signature.toLowerCase() &&
    channel.signedMaxClaimable === payment.maxClaimableAmount &&
    channel.chargedCumulativeAmount === payment.maxClaimableAmount &&
    paidCall?.paymentId === call.paymentId &&
    paidCall.resource === call.resource
  );
}
