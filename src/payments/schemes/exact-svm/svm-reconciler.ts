import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { PaymentRequirements } from '@x402/core/types';
import { remoteText } from '../../../common/remote-text.js';
import { MetricsService } from '../../../metrics/metrics.service.js';
import {
  PAYMENT_LEDGER,
  type PaymentLedger,
  type UncertainSaleRecord,
} from '../../ledger/payment-ledger.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../../payments.settings.js';
import { PaymentIdentifiers } from '../../paywall/payment-identifiers.js';
import { receiptHeader } from '../../paywall/x402-wire.js';
import { SolanaChainReader } from './svm-chain.js';
import { landingState, type SaleLandingState } from './svm-sending-mark.js';

/** How often held Solana settlements are looked up. */
export const SVM_RECONCILE_INTERVAL_MS = 500;
/** How often every instance looks through the ledger for Solana sales it does not hold yet. */
export const SVM_SWEEP_EVERY_MS = 2_000;

/**
 * A Solana sale answered 502 `settlement_unknown`, its claim kept until the chain tells, as the
 * ledger keeps it (so any instance can reconcile it): the buyer's transaction and, when known,
 * the settlement signature to look up on chain.
 */
export interface UnknownSvmSale extends UncertainSaleRecord {
  readonly kind: 'svm';
  readonly payment: {
    readonly requirement: PaymentRequirements;
    /** The buyer's signed wire transaction (base64). */
    readonly transaction: string;
    /** The token owner who signed the transfer. */
    readonly payer: string;
    /** The recent blockhash the transaction lives by. */
    readonly blockhash: string;
  };
  /** The settlement transaction's signature (base58), when known. */
  readonly signature?: string;
  /**
   * The chain's confirmed slot (decimal) read before the request sent its transaction: a landing
   * at or before it is an earlier one, not this sale's.
   */
  readonly sentAfterSlot?: string;
}

/** Whether an uncertain sale the ledger keeps is a Solana one (this reconciler's). */
export function isSvmSale(record: UncertainSaleRecord): record is UnknownSvmSale {
  return record.kind === 'svm';
}

/**
 * Settles the Solana sales whose outcome was unknown by their transaction signature: landed →
 * recorded settled (revenue, never accepted again, and the answer stored for a retry with the
 * same payment-identifier); failed on chain, or its blockhash no longer recent and the signature
 * unseen (it can never land) → the claim is given back. Without a signature or an RPC the claim
 * is kept until the payment expires.
 *
 * Each sale is recorded uncertain in the (shared) ledger, so every instance answers a retry 502
 * (never a 402 inviting a second payment), and every instance looks through the ledger every
 * SVM_SWEEP_EVERY_MS for Solana sales it does not hold: one that answered 502 and stopped is
 * finished by the others. Two instances may look up the same sale at once: the ledger counts its
 * settlement once, and giving back is idempotent. A record the ledger could not write (a shared
 * store that went away) is asked again at every pass; meanwhile this instance alone holds it.
 */
@Injectable()
export class SvmReconciler implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(SvmReconciler.name);
  private readonly held = new Map<string, UnknownSvmSale>();
  /** Held sales the ledger has not recorded as uncertain yet. */
  private readonly unrecorded = new Set<string>();
  private readonly chain: SolanaChainReader | undefined;
  private timer: NodeJS.Timeout | undefined;
  private sweeps: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    @Inject(PAYMENT_LEDGER) private readonly ledger: PaymentLedger,
    private readonly metrics: MetricsService,
    private readonly identifiers: PaymentIdentifiers,
    @Inject(PAYMENT_SETTINGS.token) payments: PaymentConfig,
  ) {
    const rpcUrl = payments.solana?.rpcUrl;
    this.chain = rpcUrl === undefined ? undefined : new SolanaChainReader(rpcUrl);
  }

  onApplicationBootstrap(): void {
    if (this.chain === undefined) return;
    this.sweeps = setInterval(() => {
      void this.sweep();
    }, SVM_SWEEP_EVERY_MS);
    this.sweeps.unref();
  }

  /** Whether this payment's settlement is held here, unknown. */
  holds(fingerprint: string): boolean {
    return this.held.has(fingerprint);
  }

  /**
   * A sale just answered 502: recorded uncertain in the ledger (asked again at every pass if the
   * ledger cannot record it now) and watched on chain from now on.
   */
  async hold(sale: UnknownSvmSale): Promise<void> {
    this.held.set(sale.fingerprint, sale);
    this.unrecorded.add(sale.fingerprint);
    await this.record(sale);
    this.watch();
  }

  /** Takes on the ledger's Solana uncertain sales this instance does not hold yet. */
  async sweep(): Promise<void> {
    let sales;
    try {
      sales = await this.ledger.uncertainSales();
    } catch (error) {
      this.logger.warn(`could not list uncertain Solana settlements: ${remoteText(error)}`);
      return;
    }
    for (const sale of sales) {
      if (isSvmSale(sale) && !this.held.has(sale.fingerprint)) {
        this.held.set(sale.fingerprint, sale);
        this.watch();
      }
    }
  }

  /** One pass over the held sales (also run by the timer). */
  async reconcile(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (const sale of [...this.held.values()]) await this.settleOne(sale);
    } finally {
      this.running = false;
      if (this.held.size === 0) this.stopTimer();
    }
  }

  onModuleDestroy(): void {
    this.stopTimer();
    if (this.sweeps !== undefined) clearInterval(this.sweeps);
    this.sweeps = undefined;
  }

  private watch(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => {
      void this.reconcile();
    }, SVM_RECONCILE_INTERVAL_MS);
    this.timer.unref();
  }

  private async record(sale: UnknownSvmSale): Promise<void> {
    try {
      await this.ledger.markUncertain(sale);
      this.unrecorded.delete(sale.fingerprint);
    } catch (error) {
      this.logger.error(
        `could not record ${sale.fingerprint} as uncertain (asked again every ${SVM_RECONCILE_INTERVAL_MS} ms): ${remoteText(error)}`,
      );
    }
  }

  private async settleOne(sale: UnknownSvmSale): Promise<void> {
    const chain = this.chain;
    if (Date.now() >= sale.expiresAt) {
      this.forget(sale); // the ledger's claim expires with it
      return;
    }
    if (this.unrecorded.has(sale.fingerprint)) await this.record(sale);
    if (chain === undefined || sale.signature === undefined) return;
    try {
      const stateOf = (): Promise<SaleLandingState> =>
        landingState(chain, sale.signature as string, sale.sentAfterSlot);
      let state = await stateOf();
      if (state === 'unseen' && !(await chain.blockhashValid(sale.payment.blockhash))) {
        // asked again: it may have landed between the two reads
        state = await stateOf();
        if (state === 'unseen') state = 'failed';
      }
      if (state === 'unseen') return;
      // the sale stays held until the ledger has its outcome: a failed write is tried again
      if (state === 'landed') await this.landed(sale, sale.signature);
      else if (state === 'landed_earlier') await this.landedEarlier(sale);
      else await this.neverLanded(sale);
      this.forget(sale);
    } catch (error) {
      this.logger.warn(`cannot reconcile ${sale.fingerprint} yet: ${remoteText(error)}`);
    }
  }

  private async landed(sale: UnknownSvmSale, signature: string): Promise<void> {
    if (sale.paymentId !== undefined) {
      const [name, value] = receiptHeader(sale.version, {
        success: true,
        transaction: signature,
        network: sale.payment.requirement.network,
        payer: sale.payment.payer,
      });
      const headers = { [name]: value, 'cache-control': 'private, no-store' };
      await this.identifiers.storeAnswer(sale.paymentId, sale.fingerprint, headers, sale.body);
    }
    // false: another instance recorded it first, and counted it
    if (await this.ledger.resolveSettled(sale.fingerprint, sale.expiresAt)) {
      this.metrics.paymentReconciled(sale.route, sale.payment.requirement);
      this.logger.log(`Solana settlement ${signature} landed: ${sale.fingerprint} settled`);
    }
  }

  /**
   * Landed before its request sent it: used, and by an earlier request. Recorded used (never
   * accepted again) without revenue or a stored answer; its payment-identifier sold nothing.
   */
  private async landedEarlier(sale: UnknownSvmSale): Promise<void> {
    // the id and the uncertain record go; then the transaction is recorded used (a claim made in
    // between is refused the same way, by the chain)
    await this.ledger.resolveNeverSettled(sale.fingerprint, sale.paymentId);
    await this.ledger.settle(sale.fingerprint, sale.expiresAt);
    this.logger.warn(
      `Solana settlement ${sale.signature} had landed before its request sent it: ${sale.fingerprint} sold nothing`,
    );
  }

  private async neverLanded(sale: UnknownSvmSale): Promise<void> {
    if (this.unrecorded.has(sale.fingerprint)) {
      // never recorded uncertain: its claims are still in flight
      await this.ledger.release(sale.fingerprint);
      await this.identifiers.release(sale.paymentId);
    } else {
      await this.ledger.resolveNeverSettled(sale.fingerprint, sale.paymentId);
    }
    this.logger.warn(`Solana settlement ${sale.signature} never landed: nothing was taken`);
  }

  private forget(sale: UnknownSvmSale): void {
    this.held.delete(sale.fingerprint);
    this.unrecorded.delete(sale.fingerprint);
  }

  private stopTimer(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
