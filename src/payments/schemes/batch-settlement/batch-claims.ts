import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { isFacilitatorUnreachable, reasonOf } from '../../facilitator/facilitator-client.js';
import { clearClaiming, markClaiming } from './claim-marks.js';
import { IdleRefunds } from './idle-refunds.js';
import type {
  BatchSettlementChannelManager,
  Channel,
  ChannelStorage,
  ClaimResult,
} from '@x402/evm/batch-settlement/server';

/** A channel whose vouchers the chain refused is left out of claims this long, then tried again. */
export const PARK_MS = 60 * 60 * 1000;

/** What one claim round did. */
export interface ClaimRound {
  /** Vouchers claimed, over all claim transactions of the round. */
  readonly vouchers: number;
  /** The settle transaction that paid the claims to X402_PAY_TO, when one ran. */
  readonly settled: string | undefined;
  /** Channels set aside in this round because the chain refused their vouchers. */
  readonly parked: readonly string[];
}

export interface BatchClaimsOptions {
  readonly intervalMs: number;
  /** Unclaimed atomic units on one channel that start a round before the timer; 0n: never. */
  readonly threshold: bigint;
  readonly now?: () => number;
}

/**
 * Claims recorded vouchers and settles the claims to X402_PAY_TO, one round at a time: on a timer,
 * when a channel's unclaimed amount reaches the threshold, on demand, and once more at shutdown.
 *
 * One voucher the chain refuses (its payer withdrew the escrow, say) reverts the whole claim
 * transaction it is in; claimed naively, it would block every later claim for good. So a refused
 * claim is split in halves until the refused channel stands alone, and that channel is set aside
 * for PARK_MS (left out of claims and refunds, and logged) while every other channel is paid. A
 * facilitator or RPC that does not answer sets nothing aside: the round just fails and the next
 * one tries again.
 */
export class BatchClaims {
  private readonly logger = new Logger('BatchSettlement');
  private readonly parked = new Map<string, number>();
  private readonly refunds: IdleRefunds;
  private stopped = false;
  private readonly now: () => number;
  private queue: Promise<unknown> = Promise.resolve();
  private pending = 0;
  /** Claims landed but their settle did not: the next round settles even with nothing new. */
  private settleOwed = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly manager: BatchSettlementChannelManager,
    private readonly storage: ChannelStorage,
    private readonly options: BatchClaimsOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.refunds = new IdleRefunds(manager, storage, {
      now: this.now,
      isParked: (channelId) => this.isParked(channelId),
      givesWay: () => this.stopped || this.pending > 0,
    });
  }

  /** Rounds every interval, each followed by the refunds of channels idle for a day. */
  start(): void {
    this.timer = setInterval(() => {
      if (this.pending > 0) return;
      void this.roundLogged('timer');
      void this.refundIdle().catch((error: unknown) => {
        this.logger.error(`refund round failed: ${reasonOf(error)}`);
      });
    }, this.options.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer, then claims and settles what is left (the caller bounds the wait). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.roundLogged('final');
  }

  /**
   * Refunds the channels idle for a day, one at a time, after any running round, giving way to
   * any claim round that comes up meanwhile (the rest wait for the next tick: claims must keep
   * their period, well inside the payers' withdraw delay). Each channel is held first (a
   * reservation in its record, renewed while its refund is out, so a voucher or deposit arriving
   * meanwhile is refused as busy on every instance): the refund gives back what the chain holds
   * over the charged total, so a voucher accepted while it is out would be refunded to its
   * payer and never claimed. A refunded channel's record is deleted; a failed refund keeps the
   * hold until it expires and is not tried again for REFUND_RETRY_MS.
   */
  refundIdle(): Promise<void> {
    const refunds = this.queue.then(
      () => this.refunds.refund(),
      () => this.refunds.refund(),
    );
    this.queue = refunds.catch(() => undefined);
    return refunds;
  }

  /** One round after any running one: everything recorded so far is claimed and settled. */
  claimAndSettle(): Promise<ClaimRound> {
    this.pending += 1;
    const round = this.queue.then(
      () => this.round(),
      () => this.round(),
    );
    this.queue = round.finally(() => {
      this.pending -= 1;
    });
    return round;
  }

  /**
   * After a voucher was recorded: a round now when the channel's unclaimed amount reached the
   * threshold and no round is already waiting.
   */
  claimIfOverThreshold(charged: bigint, claimed: bigint): void {
    const { threshold } = this.options;
    if (threshold === 0n || this.pending > 0 || charged - claimed < threshold) return;
    void this.roundLogged('threshold');
  }

  /** Whether a claim round is running or waiting: what it claims was read from the records. */
  claiming(): boolean {
    return this.pending > 0;
  }

  /** Whether the chain refused this channel's vouchers lately (left out of claims and refunds). */
  isParked(channelId: string): boolean {
    const until = this.parked.get(channelId.toLowerCase());
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.parked.delete(channelId.toLowerCase());
    return false;
  }

  private async roundLogged(why: string): Promise<void> {
    try {
      await this.claimAndSettle();
    } catch (error) {
      const reason = reasonOf(error);
      // the timer and a threshold round may both settle: finding nothing left is no error
      if (reason.includes('nothing_to_settle')) this.logger.debug(`${why} round: ${reason}`);
      else this.logger.error(`${why} claim round failed: ${reason}`);
    }
  }

  private async round(): Promise<ClaimRound> {
    const parked: string[] = [];
    const claims = await this.claimAll(parked);
    const vouchers = claims.reduce((sum, claim) => sum + claim.vouchers, 0);
    for (const claim of claims) {
      this.logger.log(`claimed ${claim.vouchers} vouchers in ${claim.transaction}`);
    }
    if (claims.length > 0) this.settleOwed = true;
    if (!this.settleOwed) return { vouchers, settled: undefined, parked };
    const settled = await this.manager.settle();
    this.settleOwed = false;
    this.logger.log(`settled the claims to X402_PAY_TO in ${settled.transaction}`);
    return { vouchers, settled: settled.transaction, parked };
  }

  /**
   * Claims the channels `pick` keeps, each marked first in its record (claim-marks.ts) and claimed
   * as marked, the marks cleared once the claim landed or failed.
   */
  private async claimMarked(pick: (channel: Channel) => boolean): Promise<ClaimResult[]> {
    const by = `claim:${randomUUID()}`;
    const marked: string[] = [];
    const selectClaimChannels = async (channels: Channel[]): Promise<Channel[]> => {
      const claimed: Channel[] = [];
      for (const channel of channels) {
        if (!pick(channel) || !hasUnclaimed(channel)) continue;
        const record = await markClaiming(this.storage, channel.channelId, by, this.now());
        if (record === undefined) continue;
        marked.push(record.channelId);
        claimed.push(record);
      }
      return claimed;
    };
    try {
      return await this.manager.claim({ selectClaimChannels });
    } finally {
      for (const channelId of marked) {
        await clearClaiming(this.storage, channelId, by, this.now());
      }
    }
  }

  private async claimAll(parked: string[]): Promise<ClaimResult[]> {
    try {
      return await this.claimMarked((channel) => !this.isParked(channel.channelId));
    } catch (error) {
      if (!isChannelFault(error)) throw error;
      // batches of 100 before the refused one may have landed: their claims are owed a settle
      this.settleOwed = true;
      this.logger.warn(`a claim was refused (${reasonOf(error)}); finding the channel at fault`);
    }
    // the batches before the refused one landed and are recorded; the rest is split in halves
    // until each refused channel stands alone: a few transactions, not one per channel
    const claims: ClaimResult[] = [];
    const unclaimed = (await this.storage.list())
      .filter((channel) => hasUnclaimed(channel) && !this.isParked(channel.channelId))
      .map((channel) => channel.channelId.toLowerCase());
    await this.claimGroup(unclaimed, claims, parked);
    return claims;
  }

  private async claimGroup(ids: string[], claims: ClaimResult[], parked: string[]): Promise<void> {
    if (ids.length === 0) return;
    const group = new Set(ids);
    try {
      claims.push(
        ...(await this.claimMarked((channel) => group.has(channel.channelId.toLowerCase()))),
      );
      return;
    } catch (error) {
      if (!isChannelFault(error)) throw error;
      const [only] = ids;
      if (ids.length === 1 && only !== undefined) {
        this.parked.set(only, this.now() + PARK_MS);
        parked.push(only);
        this.logger.error(
          `the chain refused the vouchers of channel ${only} (${reasonOf(error)}); ` +
            `left out of claims for ${PARK_MS / 60_000} min while the other channels are paid`,
        );
        return;
      }
    }
    const half = Math.ceil(ids.length / 2);
    await this.claimGroup(ids.slice(0, half), claims, parked);
    await this.claimGroup(ids.slice(half), claims, parked);
  }
}

function hasUnclaimed(channel: Channel): boolean {
  return BigInt(channel.chargedCumulativeAmount) > BigInt(channel.totalClaimed);
}

/**
 * The claim failed because of its rows: the chain (or the facilitator's simulation of it)
 * reverted, or the claim could not even be built from a record. Not a fault of the rows, and no
 * reason to set a channel aside: the facilitator or its RPC did not answer.
 */
function isChannelFault(error: unknown): boolean {
  if (!(error instanceof Error) || isFacilitatorUnreachable(error)) return false;
  if (error.message.startsWith('Claim failed:')) return /revert/i.test(error.message);
  return true;
}
