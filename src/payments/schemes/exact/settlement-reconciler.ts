import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { backoffDelay, type Backoff } from '../../../common/backoff.js';
import { remoteText } from '../../../common/remote-text.js';
import {
  BackgroundTimeout,
  ScheduledTimeout,
  type TimeoutSlot,
} from '../../../common/timeout-slot.js';
import type { SettlementTrace } from '../../facilitator/facilitator-client.js';
import {
  PAYMENT_LEDGER,
  type PaymentLedger,
  type UncertainSaleRecord,
} from '../../ledger/payment-ledger.js';
import { RECONCILE_CLAIMS, type ReconcileClaim, type ReconcileClaims } from './reconcile-claims.js';
import {
  SETTLEMENT_CHAINS,
  SettlementChains,
  authorizationUse,
  transactionPaid,
} from '../../../chain/settlement-chain.js';
import { SoldAnswers } from './sold-answers.js';
import { isExactSale, type UncertainSale } from './uncertain-sale.js';

export type Reconciliation = 'settled' | 'pending' | 'not_settled';

/** Delays between two looks at one payment. */
const CHECKS: Backoff = { baseMs: 250, maxMs: 30_000 };
/**
 * The last look comes this long before the payment's expiry: its records (the payment, its
 * payment-identifier) expire then, and a 200 stored after that would be stored for nobody.
 */
const LAST_LOOK_BEFORE_EXPIRY_MS = 5_000;
/** How often every instance looks through the ledger for uncertain sales nobody is reconciling. */
export const SWEEP_EVERY_MS = 2_000;

/** A sale this instance is reconciling: its claim, its timer, and its settlement's trace if local. */
interface Reconciling {
  readonly sale: UncertainSale;
  readonly claim: ReconcileClaim;
  readonly timer: TimeoutSlot;
  /** Where this instance settled it: a transaction sent after the deadline still shows up here. */
  readonly trace: SettlementTrace | undefined;
  checks: number;
}

/**
 * Finds out, from the chain, what happened to sales answered 502 `settlement_unknown`: the
 * receipt of the transaction if one is known, else the token's `authorizationState(payer,
 * nonce)` and the `AuthorizationUsed` event. A payment shown settled is recorded as settled and
 * its payment-identifier gets its stored 200; one that can no longer settle (the chain past
 * validBefore, nonce unused) is forgotten with its id, so a retry gets the 402 an expired
 * authorization gets. Without a readable chain nothing can be reconciled.
 *
 * The uncertain sale lives in the (shared) ledger, so any instance can finish it: the instance
 * that answered 502 starts at once, and every instance looks through the ledger every
 * SWEEP_EVERY_MS for sales nobody holds a claim on (RECONCILE_CLAIMS: one instance works on each
 * at a time). Shutting down hands its sales over (claims released); an instance that dies loses
 * its claims when they expire, and another takes them over.
 */
@Injectable()
export class SettlementReconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SettlementReconciler.name);
  private readonly reconciling = new Map<string, Reconciling>();
  /** Sales the ledger has not recorded yet (a shared store that went away), asked again. */
  private readonly unrecorded = new Set<UncertainSale>();
  private readonly sweeps: TimeoutSlot;
  private stopped = false;

  constructor(
    @Inject(SETTLEMENT_CHAINS) private readonly chains: SettlementChains,
    @Inject(PAYMENT_LEDGER) private readonly ledger: PaymentLedger,
    @Inject(RECONCILE_CLAIMS) private readonly claims: ReconcileClaims,
    private readonly sold: SoldAnswers,
    scheduler: SchedulerRegistry,
  ) {
    this.sweeps = new ScheduledTimeout(scheduler, 'settlement-reconciliation', { unref: true });
  }

  onApplicationBootstrap(): void {
    this.scheduleSweep();
  }

  /**
   * A sale whose settlement outcome is unknown, just answered 502: recorded as uncertain in the
   * ledger (every retry gets 502, never a 402 inviting a second payment), and watched on chain
   * from now on. A ledger that cannot record it now is asked again at every check.
   */
  async hold(sale: UncertainSale, trace?: SettlementTrace): Promise<void> {
    if ((await this.record(sale)) === 'resolved') return;
    if (this.chains.of(sale.payment.requirement.network) === null) {
      this.logger.warn(
        `settlement of ${sale.fingerprint} cannot be reconciled: set an RPC for ${sale.payment.requirement.network} (X402_RPC_URL, X402_RPC_URL_<CHAIN ID>) to read its chain`,
      );
      return;
    }
    await this.take(sale, trace);
  }

  /** One look at the chain; exposed so tests can drive reconciliation step by step. */
  async check(sale: UncertainSale, trace?: SettlementTrace): Promise<Reconciliation> {
    const chain = this.chains.of(sale.payment.requirement.network);
    if (chain === null) return 'pending';
    await this.retryRecords();
    const known = trace?.transaction ?? sale.transaction;
    if (known !== undefined && (await transactionPaid(chain, known, sale.payment))) {
      await this.settled(sale, known);
      return 'settled';
    }
    const use = await authorizationUse(chain, sale.payment);
    if (use.kind === 'paid') {
      await this.settled(sale, use.transaction);
      return 'settled';
    }
    if (use.kind === 'unproven') return 'pending';
    // judged by the chain's clock, not ours: a late block may still carry it
    if (!(await chain.expiredUnused(sale.payment))) return 'pending';
    await this.ledger.resolveNeverSettled(sale.fingerprint, sale.paymentId);
    return 'not_settled';
  }

  /**
   * Records what the ledger could not record yet, then (with a chain to read) looks through the
   * ledger once for uncertain sales nobody reconciles, and takes them on.
   */
  async sweep(): Promise<void> {
    await this.retryRecords();
    if (!this.chains.any) return;
    let sales: UncertainSaleRecord[];
    try {
      sales = await this.ledger.uncertainSales();
    } catch (error) {
      this.logger.warn(`could not list uncertain settlements: ${remoteText(error)}`);
      return;
    }
    for (const sale of sales) {
      if (this.stopped) return;
      if (!isExactSale(sale)) continue; // another scheme's, for its reconciler
      // a sale on a network whose chain this instance cannot read is left to one that can
      if (this.chains.of(sale.payment.requirement.network) === null) continue;
      if (!this.reconciling.has(sale.fingerprint)) await this.take(sale, undefined);
    }
  }

  /** Hands every sale it reconciles over to the other instances. */
  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.sweeps.clear();
    const handedOver = [...this.reconciling.values()];
    this.reconciling.clear();
    for (const job of handedOver) job.timer.clear();
    await Promise.all(handedOver.map((job) => job.claim.release()));
  }

  /** Starts reconciling `sale` here if no other instance is. */
  private async take(sale: UncertainSale, trace: SettlementTrace | undefined): Promise<void> {
    if (!this.free(sale.fingerprint)) return;
    let claim: ReconcileClaim | undefined;
    try {
      claim = await this.claims.take(sale.fingerprint, () => {
        this.drop(sale.fingerprint);
      });
    } catch (error) {
      this.logger.warn(`could not claim ${sale.fingerprint} for reconciling: ${remoteText(error)}`);
    }
    if (claim === undefined) return;
    // the claim was asked for asynchronously: shut down, or taken here meanwhile
    if (!this.free(sale.fingerprint)) {
      await claim.release();
      return;
    }
    const job: Reconciling = { sale, claim, trace, timer: new BackgroundTimeout(), checks: 0 };
    this.reconciling.set(sale.fingerprint, job);
    this.schedule(job);
  }

  /** Whether this instance may start reconciling `fingerprint` now. */
  private free(fingerprint: string): boolean {
    return !this.stopped && !this.reconciling.has(fingerprint);
  }

  private schedule(job: Reconciling): void {
    // the last look falls just before the expiry at the latest
    const delay = backoffDelay(job.checks, CHECKS);
    const wait = Math.max(0, Math.min(delay, lastLookAt(job.sale) - Date.now()));
    job.timer.set(wait, () => {
      void this.attempt(job);
    });
  }

  /** One look; the one due just before the expiry (or later) is the last, pending or not. */
  private async attempt(job: Reconciling): Promise<void> {
    const { sale } = job;
    const last = Date.now() >= lastLookAt(sale);
    let result: Reconciliation = 'pending';
    try {
      result = await this.check(sale, job.trace);
    } catch (error) {
      this.logger.warn(`reconciling ${sale.fingerprint}: ${remoteText(error)}`);
    }
    if (this.reconciling.get(sale.fingerprint) !== job) return;
    if (result === 'pending' && !last) {
      job.checks += 1;
      this.schedule(job);
      return;
    }
    if (result === 'pending') {
      this.logger.warn(`settlement of ${sale.fingerprint} left unreconciled at its expiry`);
    } else if (result === 'not_settled') {
      this.logger.log(`settlement of ${sale.fingerprint} reconciled: nothing moved`);
    }
    this.reconciling.delete(sale.fingerprint);
    await job.claim.release();
  }

  /** Another instance holds the sale now (this one was cut off): it stops looking. */
  private drop(fingerprint: string): void {
    const job = this.reconciling.get(fingerprint);
    if (job === undefined) return;
    this.reconciling.delete(fingerprint);
    job.timer.clear();
  }

  /** The chain showed the sale paid by `transaction`: the ledger, metrics and the client's id learn it. */
  private async settled(sale: UncertainSale, transaction: `0x${string}`): Promise<void> {
    // another reconciler (one that lost its claim while still looking) may have been first
    if (!(await this.ledger.resolveSettled(sale.fingerprint, sale.expiresAt))) return;
    await this.sold.reconciled(sale, transaction);
    this.logger.log(`settlement of ${sale.fingerprint} reconciled: settled by ${transaction}`);
  }

  /** 'resolved': the ledger already knows the payment settled; 'failed': asked again later. */
  private async record(sale: UncertainSale): Promise<'recorded' | 'resolved' | 'failed'> {
    try {
      const recorded = await this.ledger.markUncertain(sale);
      this.unrecorded.delete(sale);
      return recorded;
    } catch (error) {
      this.unrecorded.add(sale);
      this.logger.error(
        `could not record ${sale.fingerprint} as uncertain (asked again every ${SWEEP_EVERY_MS} ms): ${remoteText(error)}`,
      );
      return 'failed';
    }
  }

  /**
   * Whether this instance holds an uncertain sale of `fingerprint` (or of the payment-identifier
   * `paymentId`) the ledger could not record yet: a retry must get 502, not the 402 an in-flight
   * claim gets, which would invite paying again.
   */
  holdsUnrecorded(fingerprint: string, paymentId?: string): boolean {
    for (const sale of this.unrecorded) {
      if (sale.fingerprint === fingerprint) return true;
      if (paymentId !== undefined && sale.paymentId === paymentId) return true;
    }
    return false;
  }

  private async retryRecords(): Promise<void> {
    for (const sale of [...this.unrecorded]) {
      if (sale.expiresAt <= Date.now()) this.unrecorded.delete(sale);
      else await this.record(sale);
    }
  }

  private scheduleSweep(): void {
    this.sweeps.set(SWEEP_EVERY_MS, () => {
      void this.sweep().finally(() => {
        if (!this.stopped) this.scheduleSweep();
      });
    });
  }
}

function lastLookAt({ expiresAt }: UncertainSale): number {
  return expiresAt - LAST_LOOK_BEFORE_EXPIRY_MS;
}
