import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Channel, ChannelStorage } from '@x402/evm/batch-settlement/server';
import { isRecord } from '../../../common/json.js';
import { reasonOf } from '../../facilitator/facilitator-client.js';
import { FACILITATORS, NetworkFacilitators } from '../../facilitator/network-facilitators.js';
import { PAYMENT_LEDGER, type PaymentLedger } from '../../ledger/payment-ledger.js';
import type {
  ChargedUnit,
  KeptUnit,
  MeteredAccount,
  MeteringScheme,
  UnitCharge,
} from '../../paywall/metered-sale.js';
import { PaymentRefusedError } from '../../paywall/offered-requirement.js';
import type { PresentedPayment, SaleContext } from '../../paywall/seller-scheme.js';
import { acceptBatchPayment, type AcceptedBatchPayment } from './batch-acceptance.js';
import { BatchChannels } from './batch-channels.js';
import {
  CHANNEL_SET_ASIDE,
  CUMULATIVE_MISMATCH,
  INVALID_VOUCHER_SIGNATURE,
  MISSING_CHANNEL,
} from './batch-reasons.js';
import {
  chargeStreamUpdate,
  raiseCover,
  takeBackStreamCharge,
  takeResend,
  VOUCHER_SPENT,
  type StreamCharge,
} from './stream-charges.js';
import { voucherSigner } from './voucher-signature.js';
import { chainIdOf } from './voucher-rules.js';

/**
 * How old a record's on-chain state may be before a cover is checked against the chain again;
 * an open stream reads it again as often, in the background.
 */
export const CHAIN_STATE_TTL_MS = 60_000;
/** A channel held by a per-request voucher in flight: a stream charge waits this long for it. */
const BUSY_RETRY_MS = 25;
const BUSY_RETRIES = 40;

/**
 * How long a voucher that became a stream's cover stays refused as a cover again: longer than
 * the longest withdraw delay (30 days) plus the claim period, so a cover a claim published on
 * chain can never be presented again by someone who read it there, whatever became of the
 * channel's record (an idle refund deletes it).
 */
const COVER_MARK_MS = 31 * 24 * 60 * 60 * 1000;

/**
 * `batch-settlement` sells per unit (MeteringScheme): the buyer's voucher on an open channel
 * signs the charged total plus a budget; it is checked (the payer authorizer's signature, the
 * exact base, the balance, no withdrawal; the chain's state read again through the facilitator
 * when the record's is old) and becomes the channel's cover. Each unit is then one atomic write
 * on the channel record (stream-charges.ts); claims take the charged total only.
 */
@Injectable()
export class BatchMetering implements MeteringScheme {
  private readonly logger = new Logger('BatchSettlement');

  constructor(
    private readonly channels: BatchChannels,
    @Inject(FACILITATORS) private readonly facilitators: NetworkFacilitators,
    @Inject(PAYMENT_LEDGER) private readonly ledger: PaymentLedger,
  ) {}

  payerOf(presented: PresentedPayment): string {
    const raw: unknown = presented.payload.payload;
    const config = isRecord(raw) ? raw['channelConfig'] : undefined;
    const payer = isRecord(config) ? config['payer'] : undefined;
    return typeof payer === 'string' ? payer.toLowerCase() : '';
  }

  async openMetered(
    presented: PresentedPayment,
    context: SaleContext,
    unit: string,
  ): Promise<MeteredAccount> {
    const accepted = this.accepted(presented);
    const { network } = presented.requirement;
    const storage = this.channels.channels(network);
    const channel = await this.cover(storage, accepted);
    this.logger.debug(
      `${context.label}: stream cover ${channel.signedMaxClaimable} on ${accepted.channelId}`,
    );
    return new BatchMeteredAccount(this, storage, channel, accepted, BigInt(unit));
  }

  /** Whether claims set the channel aside (the chain refused its vouchers): nothing charged on it. */
  isSetAside(network: string, channelId: string): boolean {
    return this.channels.setAsideOn(network)(channelId);
  }

  /**
   * An open stream's background check of its channel against the chain (when the record's state
   * is older than CHAIN_STATE_TTL_MS): the record takes the state read (a withdrawal the payer
   * started, the claimed total), so its next charge is refused; why the chain refuses the
   * voucher, if it does. A facilitator that does not answer changes nothing.
   */
  async recheck(
    storage: ChannelStorage,
    accepted: AcceptedBatchPayment,
  ): Promise<string | undefined> {
    const record = await storage.get(accepted.channelId);
    if (record === undefined) return MISSING_CHANNEL;
    try {
      await this.syncIfOld(storage, record, accepted);
      return undefined;
    } catch (error) {
      if (error instanceof PaymentRefusedError) return error.reason;
      this.logger.warn(
        `stream on ${accepted.channelId}: the chain could not be read: ${reasonOf(error)}`,
      );
      return undefined;
    }
  }

  /** A top-up of `account`: a voucher on the same channel, checked as at opening. */
  async raise(
    presented: PresentedPayment,
    storage: ChannelStorage,
    channelId: string,
  ): Promise<AcceptedBatchPayment> {
    const accepted = this.accepted(presented);
    if (accepted.channelId.toLowerCase() !== channelId.toLowerCase()) {
      throw new PaymentRefusedError(
        'stream_foreign_channel: a top-up must be a voucher on the stream’s own channel',
      );
    }
    await this.cover(storage, accepted);
    return accepted;
  }

  private accepted(presented: PresentedPayment): AcceptedBatchPayment {
    const accepted = acceptBatchPayment(presented.payload, presented.requirement);
    if (accepted.kind === 'deposit') {
      throw new PaymentRefusedError(
        'stream_needs_open_channel: a stream is paid with a voucher on an open channel; ' +
          'open it with a deposit first (any route paid with batch-settlement), then sign ' +
          'the charged total plus the budget',
      );
    }
    return accepted;
  }

  /** Checks the voucher against the channel and makes it the channel's cover. */
  private async cover(storage: ChannelStorage, accepted: AcceptedBatchPayment): Promise<Channel> {
    const { channelId, requirement } = accepted;
    const record = await storage.get(channelId);
    if (record === undefined) {
      throw new PaymentRefusedError(
        `${MISSING_CHANNEL}: this service has no record of the channel; open it with a deposit first`,
      );
    }
    if (this.isSetAside(requirement.network, channelId)) {
      throw new PaymentRefusedError(
        `${CHANNEL_SET_ASIDE}: the chain refused this channel's vouchers lately`,
      );
    }
    const signer = voucherSigner(
      channelId,
      BigInt(accepted.maxClaimableAmount),
      chainIdOf(requirement.network),
      accepted.signature,
    );
    if (signer?.toLowerCase() !== record.channelConfig.payerAuthorizer.toLowerCase()) {
      throw new PaymentRefusedError(
        `${INVALID_VOUCHER_SIGNATURE}: the voucher is not signed by the channel's payer authorizer`,
      );
    }
    const base = BigInt(record.chargedCumulativeAmount);
    if (BigInt(accepted.maxClaimableAmount) <= base) {
      throw new PaymentRefusedError(
        `${VOUCHER_SPENT}: ${accepted.maxClaimableAmount} is not above the ${base} already charged`,
      );
    }
    if (BigInt(accepted.maxClaimableAmount) !== base + BigInt(requirement.amount)) {
      throw new PaymentRefusedError(
        `${CUMULATIVE_MISMATCH}: the voucher must sign the charged total (${base}) plus the budget ` +
          `(${requirement.amount}): ${base + BigInt(requirement.amount)}, not ${accepted.maxClaimableAmount}`,
      );
    }
    // a voucher becomes a cover once, ever: marked in the payment ledger before any chain read,
    // so one read from a claim on chain is refused without costing a facilitator call
    const mark = `stream-cover:${accepted.signature.toLowerCase()}`;
    const expiresAt = Date.now() + COVER_MARK_MS;
    if ((await this.ledger.claim(mark, expiresAt)) !== 'claimed') {
      const least = BigInt(accepted.maxClaimableAmount) - base;
      throw new PaymentRefusedError(
        `${VOUCHER_SPENT}: this voucher already covered a stream; sign a new voucher above ` +
          `${accepted.maxClaimableAmount}: the charged ${base} plus a budget over ${least}`,
      );
    }
    try {
      await this.syncIfOld(storage, record, accepted);
      const outcome = await raiseCover(storage, channelId, {
        base: record.chargedCumulativeAmount,
        maxClaimableAmount: accepted.maxClaimableAmount,
        signature: accepted.signature,
      });
      if (outcome.status === 'refused') throw new PaymentRefusedError(outcome.reason);
      await this.ledger.settle(mark, expiresAt);
      return outcome.channel;
    } catch (error) {
      await this.ledger.release(mark);
      throw error;
    }
  }

  /**
   * A record whose on-chain state is older than CHAIN_STATE_TTL_MS: the facilitator checks the
   * voucher against the chain (balance, claimed total), and the record takes the state it read.
   */
  private async syncIfOld(
    storage: ChannelStorage,
    record: Channel,
    accepted: AcceptedBatchPayment,
  ): Promise<void> {
    const synced = record.onchainSyncedAt;
    if (synced !== undefined && Date.now() - synced <= CHAIN_STATE_TTL_MS) return;
    const { network } = accepted.requirement;
    const verdict = await this.facilitators
      .of(network)
      .verify(accepted.payload, accepted.requirement);
    if (!verdict.isValid) {
      throw new PaymentRefusedError(verdict.invalidReason ?? 'invalid_batch_settlement_voucher');
    }
    const extra = verdict.extra;
    if (!isRecord(extra)) return;
    const { balance, totalClaimed, withdrawRequestedAt } = extra;
    await storage.updateChannel(accepted.channelId, (current) =>
      current === undefined || typeof balance !== 'string' || typeof totalClaimed !== 'string'
        ? current
        : {
            ...current,
            balance,
            totalClaimed:
              BigInt(totalClaimed) > BigInt(current.totalClaimed)
                ? totalClaimed
                : current.totalClaimed,
            withdrawRequestedAt: Number(withdrawRequestedAt ?? 0),
            onchainSyncedAt: Date.now(),
          },
    );
  }
}

/** One stream's account: a channel whose cover pays its updates. */
class BatchMeteredAccount implements MeteredAccount {
  readonly accountId: string;
  readonly payer: string;
  readonly charged: string;
  readonly covered: string;
  /** Every charge of this account carries an id of its own made from it (`chargedBy`). */
  private readonly chargeId = `stream:${randomUUID()}`;
  private charges = 0;
  readonly network: string;
  /** Why the chain no longer takes the channel's voucher, once a background check found it. */
  private changed: string | undefined;
  private readonly rechecks: NodeJS.Timeout;

  constructor(
    private readonly metering: BatchMetering,
    private readonly storage: ChannelStorage,
    channel: Channel,
    /** The latest voucher of the stream (the chain is checked against it). */
    private accepted: AcceptedBatchPayment,
    private readonly unit: bigint,
  ) {
    this.accountId = channel.channelId;
    this.payer = channel.channelConfig.payer.toLowerCase();
    this.charged = channel.chargedCumulativeAmount;
    this.covered = channel.signedMaxClaimable;
    this.network = accepted.requirement.network;
    // off the updates' path: a charge reads only the record this keeps fresh; the chain is read
    // when the record's state passed CHAIN_STATE_TTL_MS, once for every stream on the channel
    this.rechecks = setInterval(() => {
      void this.metering.recheck(this.storage, this.accepted).then((reason) => {
        this.changed ??= reason;
      });
    }, CHAIN_STATE_TTL_MS / 2);
    this.rechecks.unref();
  }

  end(): void {
    clearInterval(this.rechecks);
  }

  takeResend(seen: bigint, labels: readonly string[]): Promise<KeptUnit | undefined> {
    return takeResend(this.storage, this.accountId, seen, labels);
  }

  async charge(item?: ChargedUnit): Promise<UnitCharge> {
    if (this.changed !== undefined) return { kind: 'refused', reason: this.changed };
    if (this.metering.isSetAside(this.network, this.accountId)) {
      return { kind: 'refused', reason: CHANNEL_SET_ASIDE };
    }
    this.charges += 1;
    const id = `${this.chargeId}:${this.charges}`;
    for (let attempt = 0; ; attempt += 1) {
      const outcome = await chargeStreamUpdate(this.storage, this.accountId, this.unit, id, item);
      switch (outcome.status) {
        case 'charged':
          return { kind: 'charged', cumulative: outcome.cumulative, id };
        case 'exhausted':
          return {
            kind: 'exhausted',
            charged: outcome.channel.chargedCumulativeAmount,
            covered: outcome.channel.signedMaxClaimable,
          };
        case 'refused':
          return { kind: 'refused', reason: outcome.reason };
        case 'busy':
          if (attempt >= BUSY_RETRIES) return { kind: 'refused', reason: 'channel_busy' };
          await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
      }
    }
  }

  async takeBack(charge: StreamCharge): Promise<void> {
    const outcome = await takeBackStreamCharge(this.storage, this.accountId, charge, this.unit);
    if (outcome === 'claimed') {
      new Logger('BatchSettlement').warn(
        `stream on ${this.accountId}: an undelivered update charged at ${charge.cumulative} is being claimed; it stays charged and is re-sent free on a reconnect`,
      );
    } else if (outcome === 'busy') {
      new Logger('BatchSettlement').error(
        `stream on ${this.accountId}: an undelivered update charged at ${charge.cumulative} could not be taken back (busy); refund ${this.unit} to ${this.payer}`,
      );
    }
  }

  async raise(presented: PresentedPayment): Promise<{ charged: string; covered: string }> {
    this.accepted = await this.metering.raise(presented, this.storage, this.accountId);
    const channel = await this.storage.get(this.accountId);
    return {
      charged: channel?.chargedCumulativeAmount ?? this.charged,
      covered: channel?.signedMaxClaimable ?? this.accepted.maxClaimableAmount,
    };
  }
}
