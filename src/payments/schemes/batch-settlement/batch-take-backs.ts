import type { Logger } from '@nestjs/common';
import type { SettleResponse } from '@x402/core/types';
import type { Channel, ChannelStorage } from '@x402/evm/batch-settlement/server';
import { reasonOf } from '../../facilitator/facilitator-client.js';
import type { VerifiedPayment } from '../../paywall/x402-paywall.js';
import { withoutPaidCall } from './paid-calls.js';
import { CHANNEL_STATE_UNCERTAIN } from './batch-reasons.js';
import { chargeRecorded, isReserved } from './channel-reservation.js';
import { claimFloorOf } from './claim-marks.js';
import { chargedBy } from './voucher-charges.js';

/**
 * Taking a price back off a channel's charge when its call was not answered with a 200: the
 * charge may have been recorded after all (a slow deposit, a store that applied the write and
 * lost the answer). Never below what was claimed on chain: that is logged with the payer to refund.
 */

/**
 * A batch settlement its request stopped waiting for (the deposit was slow): that call was
 * answered with an error, so when the settlement lands after all with its charge recorded, the
 * price is taken back off the channel's charge; the deposit itself stays the buyer's in the
 * channel. A settlement that landed without recording its charge (its reservation expired and
 * another voucher was sold on that base meanwhile) has nothing to take back. If a claim took
 * the price on chain first, it cannot be taken back: that is logged with the payer to refund.
 */
export function takeBackLateCharge(
  storage: ChannelStorage,
  logger: Logger,
  payment: VerifiedPayment,
  voucher: ChargedVoucher,
  settling: Promise<SettleResponse>,
  claiming: () => boolean,
): Promise<void> {
  const { channelId } = voucher;
  const price = BigInt(payment.requirements.amount);
  return settling
    .then(async (settlement) => {
      if (!settlement.success) {
        // a late storage fault that may have recorded it: as when the request saw one itself
        if (settlement.errorReason === CHANNEL_STATE_UNCERTAIN) {
          await takeBackUncertainCharge(storage, logger, payment, voucher, claiming);
        }
        return;
      }
      if (!chargeRecorded(settlement, voucher.maxClaimableAmount)) {
        logger.warn(
          `batch settlement: ${channelId} settled after its request gave up, without its charge recorded; nothing to take back`,
        );
        return;
      }
      const status = await takeBackOwnCharge(storage, voucher, price, claiming);
      if (status === 'updated') {
        logger.warn(
          `batch settlement: ${channelId} settled after its request gave up; its price was taken back off the channel's charge`,
        );
      } else if (status === 'busy') {
        logger.error(
          `batch settlement: ${channelId} settled after its request gave up and stayed busy; refund ${price} to ${settlement.payer ?? 'the payer'}`,
        );
      } else if (status === 'claimed') {
        logger.error(
          `batch settlement: ${channelId} settled after its request gave up and its price was already claimed; refund ${price} to ${settlement.payer ?? 'the payer'}`,
        );
      }
    })
    .catch((error: unknown) => {
      logger.error(
        `batch settlement: could not take back the late charge on ${channelId}: ${reasonOf(error)}`,
      );
    });
}

/**
 * A voucher whose recording failed in a way that may have recorded it (the store applied the
 * write and lost the answer): its call was answered 502, so if the channel's record is this
 * voucher, its price comes off again. Retried while the store does not answer.
 */
export function takeBackUncertainCharge(
  storage: ChannelStorage,
  logger: Logger,
  payment: VerifiedPayment,
  voucher: ChargedVoucher,
  claiming: () => boolean,
): Promise<void> {
  const { channelId } = voucher;
  const price = BigInt(payment.requirements.amount);
  const attempt = async (until: number): Promise<void> => {
    try {
      const record = await storage.get(channelId);
      if (!isChargeOf(record, voucher)) {
        if (
          record !== undefined &&
          BigInt(record.chargedCumulativeAmount) > BigInt(voucher.maxClaimableAmount)
        ) {
          logger.warn(
            `batch settlement: ${channelId} was charged past a voucher answered 502 before that voucher could be checked; if its payer was charged for it, refund ${price}`,
          );
        }
        return;
      }
      const status = await takeBackOwnCharge(storage, voucher, price, claiming);
      if (status === 'busy' || status === 'claimed') {
        logger.error(
          `batch settlement: ${channelId} may have been charged for a call answered 502 (${status}); refund ${price} to its payer`,
        );
      }
    } catch (error) {
      if (Date.now() > until) {
        logger.error(
          `batch settlement: could not check ${channelId} for a charge answered 502 (${reasonOf(error)}); refund ${price} to its payer if it was recorded`,
        );
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, TAKE_BACK_RETRY_MS * 4));
      await attempt(until);
    }
  };
  return attempt(Date.now() + TAKE_BACK_WAIT_MS);
}

/**
 * A voucher answered with an error whose charge may be in the record: its channel, amount and
 * signature, and `chargeId` (its request's id) when it was checked locally: such a charge carries
 * it (`chargedBy`), so a copy of the same voucher answered 200 by another request is not taken
 * for it.
 */
export interface ChargedVoucher {
  readonly channelId: string;
  readonly maxClaimableAmount: string;
  readonly signature: string;
  readonly chargeId?: string;
}

/**
 * Whether the record's charge is this request's: it names the request (`chargedBy`); a record
 * written before charges named theirs, by the voucher's amount and signature.
 */
function isChargeOf(record: Channel | undefined, voucher: ChargedVoucher): boolean {
  if (record?.chargedCumulativeAmount !== voucher.maxClaimableAmount) return false;
  const by = chargedBy(record);
  if (by !== undefined) return by === voucher.chargeId;
  return record.signature.toLowerCase() === voucher.signature.toLowerCase();
}

/**
 * Takes back a charge known to be this request's: its paid-call stamp goes first, in a write of
 * its own (no lost answer is owed for a call answered 502, however long the price waits), then
 * the price, as long as the charge still includes it: vouchers charged on top since leave it
 * in, a take-back before this one may have taken it out ('gone').
 */
async function takeBackOwnCharge(
  storage: ChannelStorage,
  voucher: ChargedVoucher,
  price: bigint,
  claiming: () => boolean,
): Promise<'updated' | 'claimed' | 'busy' | 'gone'> {
  const { channelId, maxClaimableAmount } = voucher;
  await storage.updateChannel(channelId, (current) =>
    current !== undefined && isChargeOf(current, voucher) ? withoutPaidCall(current) : current,
  );
  return takeBackPrice(storage, channelId, price, {
    isOurs: (current) => BigInt(current.chargedCumulativeAmount) >= BigInt(maxClaimableAmount),
    claiming,
  });
}

/** A claim round on some instance marked a total (claim-marks.ts) that taking `price` would go under. */
function underClaimMark(current: Channel, price: bigint): boolean {
  const floor = claimFloorOf(current, Date.now());
  return (
    floor > BigInt(current.totalClaimed) && BigInt(current.chargedCumulativeAmount) - price < floor
  );
}

/** How long a late charge waits for a channel's reservation to end before giving up. */
const TAKE_BACK_WAIT_MS = 120_000;
const TAKE_BACK_RETRY_MS = 250;

/**
 * Takes `price` off a channel's charged total once no other request holds a reservation on it
 * and no claim round is under way, here or on any instance sharing the store (its mark in the
 * record, claim-marks.ts) (a claim already on its way to the chain has read the charge
 * with this price in it: lowered under it, the claimed total would pass the charge): a voucher
 * in flight adds its price to the total it finds, and taking ours off under it would leave that
 * voucher's own charge short of what it signed (and its call answered 502 while charged). Not
 * below the claimed total: a claimed price cannot be taken back. `isOurs`: the charge is still
 * the one to take back, checked in the same write ('gone' when it is not).
 */
export async function takeBackPrice(
  storage: ChannelStorage,
  channelId: string,
  price: bigint,
  options: { isOurs?: (current: Channel) => boolean; claiming?: () => boolean } = {},
): Promise<'updated' | 'claimed' | 'busy' | 'gone'> {
  const { isOurs = () => true, claiming = () => false } = options;
  for (const until = Date.now() + TAKE_BACK_WAIT_MS; ;) {
    const seen = { busy: false, claimed: false, gone: false };
    const { status } = await storage.updateChannel(channelId, (current) => {
      // decided afresh on every run: a store may run this again when its write races another
      seen.busy =
        claiming() ||
        (current !== undefined && (isReserved(current) || underClaimMark(current, price)));
      seen.claimed = false;
      seen.gone = current !== undefined && !seen.busy && !isOurs(current);
      if (current === undefined || seen.busy || seen.gone) return current;
      const charged = BigInt(current.chargedCumulativeAmount) - price;
      if (charged < BigInt(current.totalClaimed)) {
        // the charge stands, its payer to be refunded: not an answer to give again (LostAnswers)
        seen.claimed = true;
        return withoutPaidCall(current);
      }
      // an expired reservation still in the record could commit on the lowered total: void it
      return withoutPaidCall({
        ...current,
        chargedCumulativeAmount: charged.toString(),
        pendingRequest: undefined,
      });
    });
    if (seen.gone) return 'gone';
    if (!seen.busy) return status === 'updated' && !seen.claimed ? 'updated' : 'claimed';
    if (Date.now() > until) return 'busy';
    await new Promise((resolve) => setTimeout(resolve, TAKE_BACK_RETRY_MS));
  }
}
