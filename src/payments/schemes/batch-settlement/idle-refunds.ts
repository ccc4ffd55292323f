import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type {
  BatchSettlementChannelManager,
  Channel,
  ChannelStorage,
} from '@x402/evm/batch-settlement/server';
import { remoteText } from '../../../common/remote-text.js';
import { reasonOf } from '../../facilitator/facilitator-client.js';
import { LASTING_HOLD } from '../../channels/channel-holds.js';
import { isReserved } from './channel-reservation.js';

/** Channels idle this long are refunded to their payers (claiming their last voucher first). */
const IDLE_REFUND_MS = 24 * 60 * 60 * 1000;
/**
 * How long a channel being refunded takes no voucher: far longer than a refund transaction takes
 * to land or fail, and, after a refund whose outcome is unknown, long enough for the chain to
 * show it (the channel's on-chain state is read again before its next voucher).
 */
export const REFUND_HOLD_MS = 10 * 60 * 1000;
/** The reservation id of a refund hold (the SDK's vouchers reserve with UUIDs): a lasting one. */
const REFUND_HOLD = LASTING_HOLD;
/** A channel whose refund failed is not tried again before this (the chain may say why). */
export const REFUND_RETRY_MS = 6 * 60 * 60 * 1000;

/** What the refunds take from the claim rounds they run between. */
export interface RefundRules {
  readonly now: () => number;
  /** Whether the chain refused this channel's vouchers lately: it is not refunded then. */
  readonly isParked: (channelId: string) => boolean;
  /** A claim round is waiting, or the service is stopping: the refunds stop for this tick. */
  readonly givesWay: () => boolean;
}

/**
 * Refunds channels idle for a day to their payers, one at a time (BatchClaims runs them between
 * its claim rounds). Each channel is held first (a reservation in its record, renewed while its
 * refund is out, so a voucher or deposit arriving meanwhile is refused as busy on every
 * instance): the refund gives back what the chain holds over the charged total, so a voucher
 * accepted while it is out would be refunded to its payer and never claimed. A refunded
 * channel's record is deleted; a failed refund keeps the hold until it expires and is not tried
 * again for REFUND_RETRY_MS.
 */
export class IdleRefunds {
  private readonly logger = new Logger('BatchSettlement');
  /** Channels whose refund failed, and when they may be tried again. */
  private readonly refundRetryAt = new Map<string, number>();

  constructor(
    private readonly manager: BatchSettlementChannelManager,
    private readonly storage: ChannelStorage,
    private readonly rules: RefundRules,
  ) {}

  async refund(): Promise<void> {
    for (const channel of await this.storage.list()) {
      if (this.rules.givesWay()) return;
      if (!this.refundable(channel)) continue;
      const held = await this.hold(channel);
      if (held === undefined) continue;
      const renewal = setInterval(() => {
        void this.renew(held).catch((error: unknown) => {
          this.logger.warn(
            `could not renew the refund hold of ${held.channelId}: ${remoteText(error)}`,
          );
        });
      }, REFUND_HOLD_MS / 4);
      renewal.unref();
      try {
        const result = await refunder(this.manager).refundChannel(held);
        this.logger.log(`refunded idle channel ${result.channel} in ${result.transaction}`);
      } catch (error) {
        this.refundRetryAt.set(channel.channelId.toLowerCase(), this.rules.now() + REFUND_RETRY_MS);
        this.logger.error(
          `refund of channel ${channel.channelId} failed (${reasonOf(error)}); it takes no ` +
            `voucher for ${REFUND_HOLD_MS / 60_000} min, then its on-chain state is read again`,
        );
        continue;
      } finally {
        clearInterval(renewal);
      }
      await this.forgetRefunded(held);
    }
  }

  /** Pushes the hold's expiry out while its refund is still out (the SDK deletes an unheld record). */
  private async renew(held: Channel): Promise<void> {
    const holdId = held.pendingRequest?.pendingId;
    await this.storage.updateChannel(held.channelId, (current) =>
      current?.pendingRequest?.pendingId !== holdId || current?.pendingRequest === undefined
        ? current
        : {
            ...current,
            pendingRequest: {
              ...current.pendingRequest,
              expiresAt: this.rules.now() + REFUND_HOLD_MS,
            },
          },
    );
  }

  /** The channel, reserved for its refund if it is still what was listed; undefined if it moved. */
  private async hold(listed: Channel): Promise<Channel | undefined> {
    const holdId = `${REFUND_HOLD}${randomUUID()}`;
    const { channel } = await this.storage.updateChannel(listed.channelId, (current) =>
      current === undefined ||
      current.chargedCumulativeAmount !== listed.chargedCumulativeAmount ||
      !this.refundable(current)
        ? current
        : {
            ...current,
            // read the chain again before this channel's next voucher, whatever became of the refund
            onchainSyncedAt: undefined,
            pendingRequest: {
              pendingId: holdId,
              signedMaxClaimable: current.signedMaxClaimable,
              expiresAt: this.rules.now() + REFUND_HOLD_MS,
            },
          },
    );
    return channel?.pendingRequest?.pendingId === holdId ? channel : undefined;
  }

  /**
   * After its refund landed, the record goes. Only if the hold was lost (this process stalled
   * past its expiry) can the channel have moved meanwhile: then it is kept and logged.
   */
  private async forgetRefunded(held: Channel): Promise<void> {
    const holdId = held.pendingRequest?.pendingId;
    const { channel } = await this.storage.updateChannel(held.channelId, (current) =>
      current?.pendingRequest?.pendingId === holdId ? undefined : current,
    );
    if (channel !== undefined) {
      this.logger.error(
        `channel ${held.channelId} was refunded after its hold expired and is kept (charged ` +
          `${held.chargedCumulativeAmount} when held, ${channel.chargedCumulativeAmount} now): ` +
          'vouchers accepted since were refunded to the payer',
      );
    }
  }

  private refundable(channel: Channel): boolean {
    return (
      BigInt(channel.balance) > BigInt(channel.chargedCumulativeAmount) &&
      !isReserved(channel, this.rules.now()) &&
      (this.refundRetryAt.get(channel.channelId.toLowerCase()) ?? 0) <= this.rules.now() &&
      this.rules.now() - channel.lastRequestTimestamp >= IDLE_REFUND_MS &&
      !this.rules.isParked(channel.channelId)
    );
  }
}

/** A refund result: the channel and the refund transaction. */
interface Refund {
  readonly channel: string;
  readonly transaction: string;
}

/**
 * The SDK manager's refund of one given channel. Private in its types but a plain method: its
 * public `refund(ids)` skips a channel with a live reservation, which a held channel has.
 */
function refunder(manager: BatchSettlementChannelManager): {
  refundChannel(target: Channel): Promise<Refund>;
} {
  return manager as unknown as { refundChannel(target: Channel): Promise<Refund> };
}
