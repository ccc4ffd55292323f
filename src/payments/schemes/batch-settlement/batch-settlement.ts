import { Inject, Injectable, Logger } from '@nestjs/common';
import type { SettleResponse } from '@x402/core/types';
import { ApiError, ErrorCode } from '../../../common/api-error.js';
import { withDeadline } from '../../../common/deadline.js';
import { remoteText } from '../../../common/remote-text.js';
import { MetricsService } from '../../../metrics/metrics.service.js';
import {
  mayHaveSent,
  settlementTraces,
  type SettlementTrace,
} from '../../facilitator/facilitator-client.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../../payments.settings.js';
import { asPaymentError } from '../../paywall/payment-errors.js';
import { PaymentIdentifiers } from '../../paywall/payment-identifiers.js';
import type {
  AbandonReason,
  SaleInProgress,
  SaleOutcome,
  SaleSettlement,
} from '../../paywall/seller-scheme.js';
import { X402Paywall, type VerifiedPayment } from '../../paywall/x402-paywall.js';
import type { AcceptedBatchPayment } from './batch-acceptance.js';
import { BatchChannels } from './batch-channels.js';
import { CHANNEL_STATE_UNAVAILABLE, CHANNEL_STATE_UNCERTAIN } from './batch-reasons.js';
import { chargeRecorded } from './channel-reservation.js';

/** A batch-settlement payment verified (its channel reserved), waiting for the handler. */
export interface BatchPaymentInProgress extends SaleInProgress {
  readonly accepted: AcceptedBatchPayment;
  readonly payment: VerifiedPayment;
}

/**
 * Settles a batch-settlement sale: the voucher is recorded in the channel state (the charge is
 * owed to X402_PAY_TO from then on, claimed on chain later) before any byte of the body goes
 * out; a deposit first lands on chain through the facilitator. Refused → 402 with the reason, the
 * channel left as it was. A deposit that may have been sent, or a settlement that reports
 * success without this voucher's charge recorded (the SDK only logs a failure of its own
 * after-settle step, e.g. a deposit that outlived its channel reservation), is a 502: not a
 * 402 inviting a second deposit, and not a 200 nobody is charged for.
 */
@Injectable()
export class BatchSettlement implements SaleSettlement<BatchPaymentInProgress> {
  private readonly logger = new Logger(BatchSettlement.name);
  private readonly settleTimeoutMs: number;

  constructor(
    private readonly paywall: X402Paywall,
    private readonly channels: BatchChannels,
    private readonly identifiers: PaymentIdentifiers,
    private readonly metrics: MetricsService,
    @Inject(PAYMENT_SETTINGS.token) payments: PaymentConfig,
  ) {
    this.settleTimeoutMs = payments.settleTimeoutMs;
  }

  async close(inProgress: BatchPaymentInProgress): Promise<SaleOutcome> {
    let settlement: SettleResponse | symbol;
    const { route } = inProgress.context;
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    const { kind, channelId } = inProgress.accepted;
    // a deposit's chain calls are watched (like an `exact` settlement's); a voucher makes none
    const trace: SettlementTrace = { observed: false, broadcast: false };
    const settle = (): Promise<SettleResponse> => this.paywall.settleWithState(inProgress.payment);
    const { paymentId } = inProgress;
    // the id goes into the record with the voucher: proof of the sale should the answer be lost
    const paidCall =
      paymentId === undefined ? undefined : { paymentId, resource: inProgress.context.resource };
    // this request's id: its charge, if it is one checked locally, carries it (chargedBy)
    const chargeId = this.channels.reservationOf(inProgress.payment);
    const charged = { ...inProgress.accepted, ...(chargeId === undefined ? {} : { chargeId }) };
    const settling = this.channels.paidCalls.record(
      chargeId,
      paidCall,
      kind === 'deposit' ? () => settlementTraces.run(trace, settle) : settle,
    );
    try {
      settlement = await withDeadline(settling, this.settleTimeoutMs);
    } catch (error) {
      await this.giveBack(inProgress, 'handler_failed');
      if (kind === 'deposit') {
        // the deposit transaction may have gone out before the failure: money may have moved
        this.metrics.settlementNotProven(route, 'unknown', String(error), seconds());
        this.logger.error(`batch settlement: deposit on ${channelId} failed: ${remoteText(error)}`);
        return channelPaymentUnknown('deposit_failed');
      }
      this.metrics.settlementNotProven(route, 'unavailable', String(error), seconds());
      throw asPaymentError(error, this.logger);
    }
    if (typeof settlement === 'symbol') {
      this.metrics.settlementNotProven(route, 'unknown', 'settle_timeout', seconds());
      this.logger.error(
        `batch settlement: ${kind} on ${channelId} not settled within X402_SETTLE_TIMEOUT_MS`,
      );
      // still running: if it lands, this unanswered call's price comes off the channel's charge;
      // its payment-identifier stays taken until then (a retry meanwhile: 502 again)
      this.releaseAfter(
        this.channels.takeBackLateCharge(inProgress.payment, charged, settling),
        paymentId,
      );
      return channelPaymentUnknown('settle_timeout');
    }
    const reason = settlement.errorReason ?? 'settlement_failed';
    const unknown = settlement.success
      ? !chargeRecorded(settlement, inProgress.accepted.maxClaimableAmount) && 'charge_not_recorded'
      : reason === CHANNEL_STATE_UNCERTAIN
        ? reason
        : kind === 'deposit' &&
          mayHaveSent(settlement, trace, reason, DEPOSIT_PRE_BROADCAST_REASONS) &&
          reason;
    if (unknown !== false) {
      this.metrics.settlementNotProven(route, 'unknown', unknown, seconds());
      this.logger.error(
        `batch settlement: ${kind} on ${channelId} ended without this call's charge recorded (${unknown}); answered 502, nothing charged`,
      );
      // the storage may have recorded it before failing: then its price comes off again, and
      // its payment-identifier stays taken until then (a retry meanwhile: 502 again)
      if (unknown === CHANNEL_STATE_UNCERTAIN) {
        this.releaseAfter(
          this.channels.takeBackUncertainCharge(inProgress.payment, charged),
          paymentId,
        );
      } else {
        await this.identifiers.release(paymentId);
      }
      return channelPaymentUnknown(unknown);
    }
    if (!settlement.success && reason === CHANNEL_STATE_UNAVAILABLE) {
      this.metrics.settlementNotProven(route, 'unavailable', reason, seconds());
      this.logger.error(`batch settlement: ${kind} on ${channelId}: ${reason}`);
      await this.identifiers.release(inProgress.paymentId);
      throw new ApiError(
        ErrorCode.SharedStateUnavailable,
        'The payment channel state could not be recorded; nothing was charged.',
        { 'retry-after': '5' },
      );
    }
    if (!settlement.success) {
      this.metrics.settlementNotProven(route, 'refused', reason, seconds());
      await this.identifiers.release(inProgress.paymentId);
      return { kind: 'refused', reason };
    }
    // owed to X402_PAY_TO by a recorded voucher, claimed on chain by the next claim round
    this.metrics.paymentSettled(route, inProgress.accepted.requirement, seconds());
    this.channels.claimIfOverThreshold(settlement);
    return { kind: 'settled', receipt: settlement };
  }

  /** Frees the payment-identifier once `takingBack` (which never rejects) is done. */
  private releaseAfter(takingBack: Promise<void>, paymentId: string | undefined): void {
    void takingBack
      .then(() => this.identifiers.release(paymentId))
      .catch((error: unknown) => {
        this.logger.error(
          `could not free payment-identifier ${String(paymentId)}: ${remoteText(error)}`,
        );
      });
  }

  /** Nothing was sold: the channel's reservation and the payment-identifier are given back. */
  async giveBack(inProgress: BatchPaymentInProgress, reason: AbandonReason): Promise<void> {
    await inProgress.payment.cancel(reason);
    await this.identifiers.release(inProgress.paymentId);
  }
}

/** Reasons a facilitator gives for a deposit only from its own checks, before anything is sent. */
const DEPOSIT_PRE_BROADCAST_REASONS: ReadonlySet<string> = new Set([
  'invalid_batch_settlement_evm_deposit_simulation_failed',
  'invalid_batch_settlement_evm_deposit_below_min_deposit',
  'invalid_batch_settlement_evm_payload_authorization_valid_before',
  'invalid_batch_settlement_evm_payload_authorization_valid_after',
  'invalid_batch_settlement_evm_receive_authorization_signature',
]);

/** A batch payment whose outcome is not known: the call is not charged, a deposit stays the buyer's. */
function channelPaymentUnknown(reason: string): SaleOutcome {
  return {
    kind: 'unknown',
    transaction: undefined,
    reason,
    message:
      'The payment into your channel could not be confirmed. This call is not charged: if it ' +
      'lands after all, its price is taken back off the channel, and a deposit stays yours in ' +
      'the channel (refundable, or withdrawable after the channel delay). Retry in a few seconds.',
  };
}
