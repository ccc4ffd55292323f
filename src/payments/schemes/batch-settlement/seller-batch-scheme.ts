import { randomUUID } from 'node:crypto';
import type {
  BeforeSettleHook,
  BeforeVerifyHook,
  SettleContext,
  VerifyContext,
} from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import {
  BatchSettlementEvmScheme,
  type BatchSettlementEvmSchemeServerConfig,
  type Channel,
  type ChannelStorage,
} from '@x402/evm/batch-settlement/server';
import type { Hex } from 'viem';
import { isRecord } from '../../../common/json.js';
import { reasonOf } from '../../facilitator/facilitator-client.js';
import { PaidCallStamps } from './paid-calls.js';
import { channelState, chargedBy, commitCharge } from './voucher-charges.js';
import { voucherSigner } from './voucher-signature.js';
import {
  CHANNEL_BUSY,
  CHANNEL_SET_ASIDE,
  CHANNEL_STATE_UNAVAILABLE,
  CHANNEL_STATE_UNCERTAIN,
  CUMULATIVE_BELOW_CLAIMED,
  CUMULATIVE_EXCEEDS_BALANCE,
  CUMULATIVE_MISMATCH,
  INVALID_VOUCHER_SIGNATURE,
  MISSING_CHANNEL,
} from './batch-reasons.js';
import { chainIdOf, refusalAfterVerify, type VoucherFields } from './voucher-rules.js';

/**
 * How old a channel's on-chain state may be when a voucher is checked locally against it; older,
 * the facilitator reads the chain again. A withdrawal started on chain is seen within this time,
 * and the claim period (X402_BATCH_SETTLE_INTERVAL_MS, at most 10 min) claims every voucher
 * accepted before then well inside the shortest withdraw delay (15 min). The SDK's default is
 * up to 5 min, which leaves no margin.
 */
const CHAIN_STATE_TTL_MS = 60_000;

type BeforeVerifyResult = Awaited<ReturnType<BeforeVerifyHook>>;
type BeforeSettleResult = Awaited<ReturnType<BeforeSettleHook>>;

/**
 * The SDK's batch-settlement server scheme with two rules of this seller, checked after a
 * voucher or deposit verified and before the SDK reserves the channel for it:
 *
 * - a channel whose payer started a timed withdrawal takes no new voucher: the withdrawal could
 *   finalize before the voucher is claimed, and a claim over the remaining balance reverts;
 * - a voucher must add at least the price over what the chain shows already claimed. With the
 *   channel's record the SDK checks the exact next amount; without one (lost, or deleted after a
 *   refund) it infers the base from the voucher itself, so a voucher one unit over the claimed
 *   total would pass for a whole price. Refused as a cumulative mismatch carrying the claimed
 *   total, from which the buyer's client signs the right amount.
 *
 * A voucher on a fresh record is checked here instead of by the facilitator, reserves nothing,
 * and is charged in one write at settlement (chargeCheckedVoucher); deposits and vouchers the
 * facilitator checks take the SDK's reservation and commit.
 */
export class SellerBatchScheme extends BatchSettlementEvmScheme {
  /** The channel store itself: the SDK gets it wrapped by `paidCalls`. */
  private readonly channels: ChannelStorage;
  /** The deposit the offer asks for (deposit-policy.ts); undefined: the SDK's 10 calls. */
  private readonly minDeposit: () => bigint | undefined;

  /**
   * `isSetAside`: whether the chain refused a claim of this channel lately (BatchClaims sets such
   * a channel aside). Its vouchers cannot be paid, so it takes no new one (nor a deposit) until
   * then: selling on it would serve calls nobody pays for. `paidCalls`: the payment-identifiers
   * written with the charges (PaidCallStamps).
   */
  constructor(
    receiver: `0x${string}`,
    config: BatchSettlementEvmSchemeServerConfig & {
      readonly storage: ChannelStorage;
      readonly minDeposit?: () => bigint | undefined;
    },
    private readonly isSetAside: (channelId: string) => boolean = () => false,
    private readonly paidCalls: PaidCallStamps = new PaidCallStamps(),
  ) {
    super(receiver, {
      onchainStateTtlMs: CHAIN_STATE_TTL_MS,
      ...config,
      storage: paidCalls.stamping(config.storage),
    });
    this.channels = config.storage;
    this.minDeposit = config.minDeposit ?? (() => undefined);
    const {
      onBeforeVerify: beforeVerify,
      onAfterVerify: afterVerify,
      onBeforeSettle: beforeSettle,
    } = this.schemeHooks;
    this.schemeHooks.onBeforeVerify = async (context) =>
      this.setAside(context) ??
      (await this.checkVoucherLocally(context)) ??
      (await beforeVerify?.(context));
    // a voucher checked here reserves nothing: its charge is one write, at settlement
    this.schemeHooks.onAfterVerify = async (context) =>
      (await refusalAfterVerify(context, this.getStorage())) ??
      (this.checkedHere(context.paymentPayload as PaymentPayload)
        ? undefined
        : await afterVerify?.(context));
    // A voucher is recorded in this hook. @x402/core only logs a hook that throws and goes on to
    // the facilitator, which refuses a voucher: a storage fault would read as a 402 refusal.
    this.schemeHooks.onBeforeSettle = async (context) => {
      const payload = context.paymentPayload as PaymentPayload;
      if (this.checkedHere(payload)) return this.chargeCheckedVoucher(context);
      try {
        return await beforeSettle?.(context);
      } catch (error) {
        return {
          abort: true,
          reason: await this.afterStorageFault(payload),
          message: `The channel state could not be recorded: ${reasonOf(error)}`,
        };
      }
    };
  }

  /**
   * The offer's `extra.minDeposit`, which the official client deposits: the seller's deposit
   * policy, and at least one call's price. An announcement, not a rule: a smaller deposit (a
   * buyer whose spend cap is lower) is accepted, as the SDK's server does by default.
   */
  override resolveMinDepositHint(requirements: PaymentRequirements): Promise<string> {
    const minDeposit = this.minDeposit();
    if (minDeposit === undefined) return super.resolveMinDepositHint(requirements);
    const price = BigInt(requirements.amount);
    return Promise.resolve((price > minDeposit ? price : minDeposit).toString());
  }

  /** Whether `payload` is a voucher checked here (checkVoucherLocally) rather than by the SDK. */
  private checkedHere(payload: PaymentPayload): boolean {
    const raw = payload.payload;
    return (
      this.readRequestContext(payload)?.localVerify === true &&
      isRecord(raw) &&
      raw['type'] === 'voucher'
    );
  }

  /**
   * Charges a voucher checked here: one atomic write (voucher-charges.ts), on the record as it was
   * checked, with the call's payment-identifier stamped. The record moved on since (another
   * voucher on the same base, a take-back) → a cumulative mismatch carrying the record; another
   * request holding the channel → busy; nothing charged either way.
   */
  private async chargeCheckedVoucher(context: SettleContext): Promise<BeforeSettleResult> {
    const payload = context.paymentPayload as PaymentPayload;
    const { requirements } = context;
    const request = this.takeRequestContext(payload);
    const voucher = (payload.payload as { voucher: VoucherFields }).voucher;
    // set with the request's context by checkVoucherLocally
    const id = request?.pendingId ?? randomUUID();
    const base = (BigInt(voucher.maxClaimableAmount) - BigInt(requirements.amount)).toString();
    let outcome: Awaited<ReturnType<typeof commitCharge>>;
    try {
      outcome = await commitCharge(
        this.channels,
        {
          id,
          channelId: voucher.channelId,
          base,
          charged: voucher.maxClaimableAmount,
          signature: voucher.signature,
          stamped: (next) => this.paidCalls.stampCharge(id, next),
        },
        request?.channelSnapshot,
      );
    } catch (error) {
      return {
        abort: true,
        reason: await this.afterChargeFault(voucher.channelId, id, base),
        message: `The channel state could not be recorded: ${reasonOf(error)}`,
      };
    }
    switch (outcome.status) {
      case 'committed':
        return {
          skip: true,
          result: {
            success: true,
            payer: outcome.previous.channelConfig.payer.toLowerCase(),
            transaction: '',
            network: requirements.network,
            amount: '',
            extra: {
              channelState: channelState(outcome.previous, voucher.maxClaimableAmount),
              chargedAmount: requirements.amount,
            },
          },
        };
      case 'stale':
        this.rememberChannelSnapshot(payload, outcome.channel);
        return {
          abort: true,
          reason: CUMULATIVE_MISMATCH,
          message: 'The channel was charged by another voucher meanwhile',
        };
      case 'busy':
        return { abort: true, reason: CHANNEL_BUSY, message: 'Channel is processing a request' };
      case 'refused':
        return {
          abort: true,
          reason: outcome.reason,
          message: 'The channel changed since the check',
        };
      case 'missing':
        return { abort: true, reason: MISSING_CHANNEL, message: 'No channel record' };
    }
  }

  /**
   * After the storage failed while charging a voucher checked here: the record shows this
   * request's charge (`chargedBy`) → it landed (CHANNEL_STATE_UNCERTAIN: answered 502, taken
   * back); the record still at the voucher's base → CHANNEL_STATE_UNAVAILABLE, nothing charged;
   * anything else (moved on, unreadable) → uncertain, and only a charge of this request's own is
   * ever taken back.
   */
  private async afterChargeFault(channelId: string, id: string, base: string): Promise<string> {
    try {
      const record = await this.channels.get(channelId);
      if (chargedBy(record) === id) return CHANNEL_STATE_UNCERTAIN;
      return record === undefined || record.chargedCumulativeAmount === base
        ? CHANNEL_STATE_UNAVAILABLE
        : CHANNEL_STATE_UNCERTAIN;
    } catch {
      return CHANNEL_STATE_UNCERTAIN;
    }
  }

  /**
   * After the storage failed while recording a voucher: did the write land? A store can apply a
   * write and still fail its answer (a Redis connection dropping mid-reply). The channel still
   * held by this request → nothing was recorded: the hold is let go and the answer is
   * CHANNEL_STATE_UNAVAILABLE. Anything else, the record unreadable included → the charge may be
   * recorded: CHANNEL_STATE_UNCERTAIN.
   */
  private async afterStorageFault(payload: PaymentPayload): Promise<string> {
    const pendingId = this.readRequestContext(payload)?.pendingId;
    const raw = payload.payload;
    const voucher = isRecord(raw) ? raw['voucher'] : undefined;
    const channelId = isRecord(voucher) ? voucher['channelId'] : undefined;
    if (pendingId === undefined || typeof channelId !== 'string') return CHANNEL_STATE_UNCERTAIN;
    try {
      const { status } = await this.getStorage().updateChannel(channelId, (current) =>
        current?.pendingRequest?.pendingId === pendingId
          ? { ...current, pendingRequest: undefined }
          : current,
      );
      return status === 'updated' ? CHANNEL_STATE_UNAVAILABLE : CHANNEL_STATE_UNCERTAIN;
    } catch {
      return CHANNEL_STATE_UNCERTAIN;
    }
  }

  private setAside(context: VerifyContext): BeforeVerifyResult {
    const raw = (context.paymentPayload as PaymentPayload).payload;
    const voucher = isRecord(raw) ? raw['voucher'] : undefined;
    const channelId = isRecord(voucher) ? voucher['channelId'] : undefined;
    if (typeof channelId !== 'string' || !this.isSetAside(channelId)) return undefined;
    return {
      abort: true,
      reason: CHANNEL_SET_ASIDE,
      message:
        "The chain refused this channel's last claim, so it takes no new voucher for now; pay from a new channel",
    };
  }

  /**
   * A voucher on a channel whose record is fresh, checked here without a chain call, as the SDK
   * would check it locally but about thirty times cheaper: the signer is recovered natively
   * (voucher-signature.ts) and the channel id, config and signature shape were already checked
   * by acceptBatchPayment. Anything else (a deposit, no record, stale on-chain state) goes the
   * SDK's way, to the facilitator.
   */
  private async checkVoucherLocally(context: VerifyContext): Promise<BeforeVerifyResult> {
    const payload = context.paymentPayload as PaymentPayload;
    const { requirements } = context;
    const raw = payload.payload;
    if (!isRecord(raw) || raw['type'] !== 'voucher') return undefined;
    const voucher = raw['voucher'] as VoucherFields;
    const config = raw['channelConfig'] as Channel['channelConfig'];
    const channel = await this.getStorage().get(voucher.channelId);
    const now = Date.now();
    if (
      channel === undefined ||
      channel.onchainSyncedAt === undefined ||
      now - channel.onchainSyncedAt > this.getOnchainStateTtlMs()
    )
      return undefined;
    const signed = BigInt(voucher.maxClaimableAmount);
    if (signed !== BigInt(channel.chargedCumulativeAmount) + BigInt(requirements.amount)) {
      this.rememberChannelSnapshot(payload, channel);
      return {
        abort: true,
        reason: CUMULATIVE_MISMATCH,
        message: 'Client voucher base does not match server state',
      };
    }
    this.mergeRequestContext(payload, {
      channelId: voucher.channelId,
      pendingId: randomUUID(),
      channelSnapshot: channel,
      localVerify: true,
    });
    const invalid = (reason: string) => ({
      skip: true as const,
      result: { isValid: false, invalidReason: reason, payer: config.payer },
    });
    const signer = voucherSigner(
      voucher.channelId as Hex,
      signed,
      chainIdOf(requirements.network),
      voucher.signature as Hex,
    );
    if (signer?.toLowerCase() !== config.payerAuthorizer.toLowerCase()) {
      return invalid(INVALID_VOUCHER_SIGNATURE);
    }
    if (signed > BigInt(channel.balance)) return invalid(CUMULATIVE_EXCEEDS_BALANCE);
    if (signed <= BigInt(channel.totalClaimed)) return invalid(CUMULATIVE_BELOW_CLAIMED);
    return {
      skip: true,
      result: {
        isValid: true,
        payer: config.payer,
        extra: {
          channelId: voucher.channelId,
          balance: channel.balance,
          totalClaimed: channel.totalClaimed,
          withdrawRequestedAt: channel.withdrawRequestedAt,
          refundNonce: String(channel.refundNonce),
        },
      },
    };
  }
}
