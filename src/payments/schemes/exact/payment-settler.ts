import { Inject, Injectable, Logger } from '@nestjs/common';
import type { SettleResponse } from '@x402/core/types';
import {
  FacilitatorUnavailableError,
  abandonUnsent,
  mayHaveSent,
  settlementTraces,
  type SettlementTrace,
} from '../../facilitator/facilitator-client.js';
import type { AcceptedPayment } from './payment-acceptance.js';
import {
  SETTLEMENT_CHAINS,
  SettlementChains,
  authorizationUse,
} from '../../../chain/settlement-chain.js';
import { receiptProvesPayment, type ReceiptEvidence } from '../../../chain/settlement-proof.js';
import { X402Paywall, type VerifiedPayment } from '../../paywall/x402-paywall.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../../payments.settings.js';
import { remoteText } from '../../../common/remote-text.js';
import { DEADLINE, withDeadline } from '../../../common/deadline.js';

/**
 * How a settlement ended, as far as the seller can prove it:
 * - `settled`: the price moved to the seller (shown by the receipt wherever a chain is readable);
 * - `refused`: provably nothing moved, the payment may be used again (402);
 * - `unavailable`: the facilitator could not be asked and nothing was sent (503);
 * - `unknown`: money may have moved (502 `settlement_unknown`, never accepted again);
 * - `abandoned`: the client left before anything was sent, and nothing will be (499, usable again).
 */
export type SettlementOutcome =
  | { readonly kind: 'settled'; readonly settlement: SettleResponse }
  | { readonly kind: 'refused'; readonly settlement: SettleResponse; readonly reason: string }
  | { readonly kind: 'unavailable'; readonly error: FacilitatorUnavailableError }
  | {
      readonly kind: 'unknown';
      readonly reason: string;
      /** Still written to by a settlement that outlived its deadline. */
      readonly trace: SettlementTrace;
      readonly transaction: `0x${string}` | undefined;
    }
  | { readonly kind: 'abandoned' };

/**
 * Reasons a facilitator gives for an `exact` payment only from its own checks, before anything is
 * sent. Any other failure (or one carrying a transaction) over HTTP may have moved money.
 */
const PRE_BROADCAST_REASONS: ReadonlySet<string> = new Set([
  'invalid_exact_evm_scheme',
  'invalid_exact_evm_network_mismatch',
  'invalid_exact_evm_missing_eip712_domain',
  'invalid_exact_evm_recipient_mismatch',
  'invalid_exact_evm_signature',
  'invalid_exact_evm_payload_authorization_valid_before',
  'invalid_exact_evm_payload_authorization_valid_after',
  'invalid_exact_evm_authorization_value',
  'invalid_exact_evm_payload_authorization_value_mismatch',
  'invalid_exact_evm_token_name_mismatch',
  'invalid_exact_evm_token_version_mismatch',
  'invalid_exact_evm_eip3009_not_supported',
  'invalid_exact_evm_nonce_already_used',
  'invalid_exact_evm_insufficient_balance',
  'invalid_exact_evm_transaction_simulation_failed',
  'asset_not_deployed_contract',
]);

/** How long the last look at a settlement's receipt may take once its deadline has come. */
const LAST_LOOK_MS = 500;

/**
 * Settles a verified payment within X402_SETTLE_TIMEOUT_MS and says what can be proven about
 * it. A facilitator's "success" is checked against the receipt (the token's own events) when
 * the chain is readable; a failure is a refusal only when nothing can have been sent.
 *
 * With the facilitator in this process, its settlement first checks the payment again (natively
 * for an EOA's transfer, see SellerExactFacilitator; the SDK's checks for anything else) and
 * estimates the transfer's gas, which the token refuses for an unfunded or used one. Until its
 * transaction leaves, the settlement can still be given up on for good: when nothing was sent
 * within X402_VERIFY_TIMEOUT_MS (503, the payment stays usable) or the client left (nothing
 * charged).
 */
@Injectable()
export class PaymentSettler {
  private readonly logger = new Logger(PaymentSettler.name);
  private readonly timeoutMs: number;
  private readonly sendTimeoutMs: number;

  constructor(
    private readonly paywall: X402Paywall,
    @Inject(PAYMENT_SETTINGS.token) payments: PaymentConfig,
    @Inject(SETTLEMENT_CHAINS) private readonly chains: SettlementChains,
  ) {
    this.timeoutMs = payments.settleTimeoutMs;
    this.sendTimeoutMs = Math.min(payments.verifyTimeoutMs, payments.settleTimeoutMs);
    const unread = payments.networks.filter(({ network }) => chains.of(network) === null);
    if (unread.length > 0) {
      this.logger.warn(
        `No RPC for ${unread.map(({ network }) => network).join(', ')} (X402_RPC_URL, X402_RPC_URL_<CHAIN ID>): settlements through the ${payments.facilitator.mode} ` +
          "facilitator are taken on its word (not proven from the chain's receipt) and unknown " +
          'outcomes cannot be reconciled. Set X402_RPC_URL to a Base RPC to check them.',
      );
    }
  }

  /** `clientGone`: aborts when the client's connection closes. */
  async settle(
    verified: VerifiedPayment,
    payment: AcceptedPayment,
    clientGone?: AbortSignal,
  ): Promise<SettlementOutcome> {
    const started = performance.now();
    const trace: SettlementTrace = { observed: false, broadcast: false };
    const attempt = settlementTraces
      .run(trace, () => this.settleAndProve(verified, payment, trace))
      .catch((error: unknown) =>
        // whatever failed, it failed after the facilitator was asked: money may have moved
        unknown(trace, `settlement_error: ${describe(error)}`, trace.transaction),
      );
    const early = await withDeadline(attempt, this.sendTimeoutMs, clientGone);
    if (early !== DEADLINE) return early;
    if (abandonUnsent(trace)) {
      if (clientGone?.aborted === true) return { kind: 'abandoned' };
      return {
        kind: 'unavailable',
        error: new FacilitatorUnavailableError(
          'settle',
          new Error(`nothing sent within X402_VERIFY_TIMEOUT_MS (${this.sendTimeoutMs} ms)`),
        ),
      };
    }
    const left = this.timeoutMs - (performance.now() - started);
    const outcome = left > 0 ? await withDeadline(attempt, left) : DEADLINE;
    if (outcome !== DEADLINE) return outcome;
    // a process that stalled (a long GC pause, a starved CPU) wakes with its deadline due and
    // its transaction possibly mined meanwhile
    const reason = `settlement_deadline: not confirmed within ${this.timeoutMs} ms`;
    return (
      (await this.shownOnChain(payment, trace, reason)) ?? unknown(trace, reason, trace.transaction)
    );
  }

  /**
   * For a settlement that ended without an answer (its deadline came, or the facilitator failed
   * after sending): one look at the receipt of the transaction it sent, if any, the one already
   * read or one read bounded by LAST_LOOK_MS. A payment the chain shows is served, not answered
   * 502; anything else (no transaction, not mined, unreadable, not the payment) stays unknown.
   * `reason`: what went wrong, logged when the payment is served all the same.
   */
  private async shownOnChain(
    payment: AcceptedPayment,
    trace: SettlementTrace,
    reason: string,
  ): Promise<SettlementOutcome | undefined> {
    const { transaction } = trace;
    const chain = this.chains.of(payment.requirement.network);
    if (transaction === undefined || chain === null) return undefined;
    const receipt =
      receiptIn(trace, transaction) ??
      (await withDeadline(
        chain.receipt(transaction).catch(() => undefined),
        LAST_LOOK_MS,
      ));
    if (receipt === DEADLINE || receipt === undefined) return undefined;
    if (!receiptProvesPayment(receipt, payment)) return undefined;
    this.logger.warn(`settlement ${transaction} served from its receipt after ${reason}`);
    return { kind: 'settled', settlement: settledBy(transaction, payment) };
  }

  private async settleAndProve(
    verified: VerifiedPayment,
    payment: AcceptedPayment,
    trace: SettlementTrace,
  ): Promise<SettlementOutcome> {
    let settlement: SettleResponse;
    try {
      settlement = await this.paywall.settle(verified);
    } catch (error) {
      if (error instanceof FacilitatorUnavailableError && trace.observed && !trace.broadcast) {
        return { kind: 'unavailable', error };
      }
      const reason = `settlement_error: ${describe(error)}`;
      return (
        (await this.shownOnChain(payment, trace, reason)) ??
        unknown(trace, reason, trace.transaction)
      );
    }
    if (settlement.success) return this.proven(settlement, payment, trace);
    return this.classifyFailure(settlement, payment, trace);
  }

  /** A facilitator's "success" stands only if the receipt shows the transfer of the price. */
  private async proven(
    settlement: SettleResponse,
    payment: AcceptedPayment,
    trace: SettlementTrace,
  ): Promise<SettlementOutcome> {
    const transaction = settlement.transaction as `0x${string}`;
    trace.transaction ??= transaction;
    let receipt = receiptIn(trace, transaction);
    if (receipt === undefined) {
      const chain = this.chains.of(payment.requirement.network);
      if (chain === null) return { kind: 'settled', settlement };
      try {
        receipt = await chain.receipt(transaction);
      } catch (error) {
        return unknown(
          trace,
          `settlement_unproven: the receipt could not be read (${describe(error)})`,
          transaction,
        );
      }
    }
    if (receipt !== undefined && receiptProvesPayment(receipt, payment)) {
      return { kind: 'settled', settlement };
    }
    this.logger.error(
      `facilitator reported success for transaction ${transaction}, but its receipt does not show the payment`,
    );
    return unknown(
      trace,
      'settlement_unproven: the receipt does not show the transfer of the price',
      transaction,
    );
  }

  /**
   * A failure is a refusal only when nothing of ours can have been sent and the chain (wherever
   * it is readable) shows the authorization unused. If it was used anyway, by a transaction this
   * request did not send, the outcome is unknown (502) and reconciled from the chain.
   */
  private async classifyFailure(
    settlement: SettleResponse,
    payment: AcceptedPayment,
    trace: SettlementTrace,
  ): Promise<SettlementOutcome> {
    const reason = settlement.errorReason ?? 'settlement_failed';
    if (mayHaveSent(settlement, trace, reason, PRE_BROADCAST_REASONS)) {
      return unknown(trace, reason, settlement.transaction);
    }
    const refused: SettlementOutcome = { kind: 'refused', settlement, reason };
    const chain = this.chains.of(payment.requirement.network);
    if (chain === null) return refused;
    try {
      const use = await authorizationUse(chain, payment);
      if (use.kind === 'unused') return refused;
      // Used, and not by anything this request sent: by someone holding the signed authorization,
      // or by another instance serving the same payment. Not a refusal (the price may have reached
      // us) and not a 200 (another request may have been served for it): unknown, and the
      // reconciler settles it from the chain.
      return unknown(
        trace,
        `${reason}: the authorization was used by another transaction`,
        use.transaction,
      );
    } catch (error) {
      return unknown(
        trace,
        `${reason} (and the chain could not be read: ${describe(error)})`,
        trace.transaction,
      );
    }
  }
}

/** The receipt the settlement's trace already read for `transaction`, if any. */
function receiptIn(
  trace: SettlementTrace,
  transaction: `0x${string}`,
): ReceiptEvidence | undefined {
  return trace.receipt?.transactionHash === transaction ? trace.receipt : undefined;
}

/** What the facilitator answers for a settlement the chain shows, `transaction` having paid. */
export function settledBy(transaction: `0x${string}`, payment: AcceptedPayment): SettleResponse {
  return {
    success: true,
    transaction,
    network: payment.requirement.network,
    payer: payment.authorization.from,
  };
}

/** `transaction`: the one the client should look for, if any; none is not the same as ours. */
function unknown(
  trace: SettlementTrace,
  reason: string,
  transaction: string | undefined,
): SettlementOutcome {
  const hash = transaction === undefined || transaction === '' ? undefined : transaction;
  return { kind: 'unknown', reason, trace, transaction: hash as `0x${string}` | undefined };
}

/** Settlement errors carry the RPC's or the facilitator's text: it goes to logs and the 502. */
function describe(error: unknown): string {
  return remoteText(error);
}
