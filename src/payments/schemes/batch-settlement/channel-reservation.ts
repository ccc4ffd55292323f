import type { SettleResponse } from '@x402/core/types';
import type { Channel } from '@x402/evm/batch-settlement/server';
import { isRecord } from '../../../common/json.js';

/**
 * Whether a successful batch settlement recorded this voucher's charge: the channel state it
 * reports (the SDK's, read back from the record after its update) carries the voucher's signed
 * cumulative amount as the charged total.
 */
export function chargeRecorded(settlement: SettleResponse, maxClaimableAmount: string): boolean {
  const extra: unknown = settlement.extra;
  const state = isRecord(extra) ? extra['channelState'] : undefined;
  return isRecord(state) && state['chargedCumulativeAmount'] === maxClaimableAmount;
}

/**
 * Whether a request (a voucher, a deposit, a refund hold) holds the channel now: the SDK's
 * reservation rule, which answers any other request on the channel `channel_busy`.
 */
export function isReserved(channel: Channel, now = Date.now()): boolean {
  return channel.pendingRequest !== undefined && channel.pendingRequest.expiresAt > now;
}
