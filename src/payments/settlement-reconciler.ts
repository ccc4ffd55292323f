import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { backoffDelay, type Backoff } from '../common/backoff.js';
import type { SettlementTrace } from './facilitator-client.js';
import type { AcceptedPayment } from './payment-acceptance.js';
import { PAYMENT_LEDGER, type PaymentLedger } from './payment-ledger.js';
import {
  SETTLEMENT_CHAIN,
  authorizationUse,
  transactionPaid,
  type SettlementChain,
} from './settlement-chain.js';

/** A settlement whose outcome was unknown when its request was answered. */
export interface UncertainSettlement {
  readonly payment: AcceptedPayment;
  readonly fingerprint: string;
  readonly expiresAt: number;
  /** Its payment-identifier, if the client sent one. */
  readonly paymentId: string | undefined;
  /** The settlement's trace: a transaction it sent after the deadline still shows up here. */
  readonly trace: SettlementTrace;
  /** Called once the chain shows the payment settled, with the transaction that did it. */
  readonly onSettled: (transaction: `0x${string}`) => Promise<void>;
}

export type Reconciliation = 'settled' | 'pending' | 'not_settled';

/** Waits between two looks at the chain for one unknown settlement. */
const CHECK_BACKOFF: Backoff = { baseMs: 250, maxMs: 30_000 };
/**
 * The last look comes this long before the payment's expiry: its records (the payment, its
 * payment-identifier) expire then, and a 200 stored after that would be stored for nobody.
 */
const LAST_LOOK_BEFORE_EXPIRY_MS = 5_000;

/**
 * Finds out, from the chain, what happened to settlements answered 502 `settlement_unknown`:
 * the receipt of the transaction if one is known, else the token's `authorizationState(payer,
 * nonce)` and the `AuthorizationUsed` event. A payment shown settled is recorded as settled and
 * its payment-identifier gets its stored 200; one that can no longer settle (the chain past
 * validBefore, nonce unused) is forgotten with its id, so a retry gets the 402 an expired
 * authorization gets. Without a readable chain nothing can be reconciled.
 */
@Injectable()
export class SettlementReconciler implements OnModuleDestroy {
  private readonly logger = new Logger(SettlementReconciler.name);
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Settlements the ledger has recorded as uncertain (payment and payment-identifier). */
  private readonly marked = new WeakSet<UncertainSettlement>();

  constructor(
    @Inject(SETTLEMENT_CHAIN) private readonly chain: SettlementChain | null,
    @Inject(PAYMENT_LEDGER) private readonly ledger: PaymentLedger,
  ) {}

  /**
   * Holds an unknown settlement: watched on chain from now on, and recorded as uncertain in the
   * ledger (so every retry gets 502, never a 402 inviting a second payment). A ledger that cannot
   * record it now (a shared store that went away) is asked again at every check.
   */
  async hold(uncertain: UncertainSettlement): Promise<void> {
    if (this.chain === null) {
      this.logger.warn(
        `settlement of ${uncertain.fingerprint} cannot be reconciled: set X402_RPC_URL to read the chain`,
      );
    } else {
      this.schedule(uncertain, 0);
    }
    await this.markUncertain(uncertain);
  }

  /** One look at the chain; exposed so tests can drive reconciliation step by step. */
  async check(uncertain: UncertainSettlement): Promise<Reconciliation> {
    const chain = this.chain;
    if (chain === null) return 'pending';
    await this.markUncertain(uncertain);
    const known = uncertain.trace.transaction;
    if (known !== undefined && (await transactionPaid(chain, known, uncertain.payment))) {
      await this.record(uncertain, known);
      return 'settled';
    }
    const use = await authorizationUse(chain, uncertain.payment);
    if (use.kind === 'paid') {
      await this.record(uncertain, use.transaction);
      return 'settled';
    }
    if (use.kind === 'unproven') return 'pending';
    // judged by the chain's clock, not ours: a late block may still carry it
    if (!(await chain.expiredUnused(uncertain.payment))) return 'pending';
    await this.ledger.resolveNeverSettled(uncertain.fingerprint, uncertain.paymentId);
    return 'not_settled';
  }

  onModuleDestroy(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private async markUncertain(uncertain: UncertainSettlement): Promise<void> {
    if (this.marked.has(uncertain)) return;
    try {
      await this.ledger.markUncertain(uncertain.fingerprint, uncertain.expiresAt);
      if (uncertain.paymentId !== undefined) {
        await this.ledger.markPaymentIdUncertain(uncertain.paymentId);
      }
      this.marked.add(uncertain);
    } catch (error) {
      this.logger.error(
        `could not record ${uncertain.fingerprint} as uncertain (asked again at the next check): ${String(error)}`,
      );
    }
  }

  /** The chain showed the payment settled by `transaction`: the ledger and the client's id learn it. */
  private async record(uncertain: UncertainSettlement, transaction: `0x${string}`): Promise<void> {
    await this.ledger.settle(uncertain.fingerprint, uncertain.expiresAt);
    await uncertain.onSettled(transaction);
    this.logger.log(`settlement of ${uncertain.fingerprint} reconciled: settled by ${transaction}`);
  }

  /** Look number `look` (0 for the first) after its back-off wait. */
  private schedule(uncertain: UncertainSettlement, look: number): void {
    const delayMs = backoffDelay(look, CHECK_BACKOFF);
    // the last look falls just before the expiry at the latest
    const wait = Math.max(0, Math.min(delayMs, lastLookAt(uncertain) - Date.now()));
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.attempt(uncertain, look);
    }, wait);
    timer.unref();
    this.timers.add(timer);
  }

  /** One look; the one due just before the expiry (or later) is the last, pending or not. */
  private async attempt(uncertain: UncertainSettlement, look: number): Promise<void> {
    const last = Date.now() >= lastLookAt(uncertain);
    let result: Reconciliation = 'pending';
    try {
      result = await this.check(uncertain);
    } catch (error) {
      this.logger.warn(
        `reconciling ${uncertain.fingerprint}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (result === 'pending' && last) {
      this.logger.warn(`settlement of ${uncertain.fingerprint} left unreconciled at its expiry`);
    } else if (result === 'pending') {
      this.schedule(uncertain, look + 1);
    } else if (result === 'not_settled') {
      this.logger.log(`settlement of ${uncertain.fingerprint} reconciled: nothing moved`);
    }
  }
}

function lastLookAt({ expiresAt }: UncertainSettlement): number {
  return expiresAt - LAST_LOOK_BEFORE_EXPIRY_MS;
}
