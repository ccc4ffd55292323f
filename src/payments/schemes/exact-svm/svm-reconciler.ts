import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { remoteText } from '../../../common/remote-text.js';
import { MetricsService } from '../../../metrics/metrics.service.js';
import { PAYMENT_LEDGER, type PaymentLedger } from '../../ledger/payment-ledger.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../../payments.settings.js';
import { PaymentIdentifiers } from '../../paywall/payment-identifiers.js';
import { receiptHeader, type ProtocolVersion } from '../../paywall/x402-wire.js';
import type { AcceptedSvmPayment } from './svm-acceptance.js';
import { SolanaChainReader } from './svm-chain.js';

/** How often held Solana settlements are looked up. */
export const SVM_RECONCILE_INTERVAL_MS = 500;

/** A Solana sale answered 502 `settlement_unknown`, its claim kept until the chain tells. */
export interface UnknownSvmSale {
  readonly fingerprint: string;
  readonly expiresAt: number;
  readonly route: string;
  readonly payment: AcceptedSvmPayment;
  /** The settlement transaction's id, when the facilitator named it (and it signs this payment). */
  readonly signature: string | undefined;
  /** The client's payment-identifier: a retry with it gets `body` once the sale is settled. */
  readonly paymentId: string | undefined;
  /** The x402 version the client paid with: its receipt header is named by it. */
  readonly version: ProtocolVersion;
  /** The answer the payment bought. */
  readonly body: unknown;
}

/**
 * Settles the Solana sales whose outcome was unknown by their transaction signature: landed →
 * recorded settled (revenue, never accepted again, and the answer stored for a retry with the
 * same payment-identifier); failed on chain, or its blockhash no
 * longer recent and the signature unseen (it can never land) → the claim is given back. Without
 * a signature or an RPC the claim is kept until the payment expires.
 */
@Injectable()
export class SvmReconciler implements OnModuleDestroy {
  private readonly logger = new Logger(SvmReconciler.name);
  private readonly held = new Map<string, UnknownSvmSale>();
  private readonly chain: SolanaChainReader | undefined;
  private timer: NodeJS.Timeout | undefined;
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

  /** Whether this payment's settlement is held here, unknown. */
  holds(fingerprint: string): boolean {
    return this.held.has(fingerprint);
  }

  hold(sale: UnknownSvmSale): void {
    this.held.set(sale.fingerprint, sale);
    this.timer ??= setInterval(() => {
      void this.reconcile();
    }, SVM_RECONCILE_INTERVAL_MS);
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
  }

  private async settleOne(sale: UnknownSvmSale): Promise<void> {
    const chain = this.chain;
    if (Date.now() >= sale.expiresAt) {
      this.held.delete(sale.fingerprint); // the ledger's claim expires with it
      return;
    }
    if (chain === undefined || sale.signature === undefined) return;
    try {
      let state = await chain.signatureState(sale.signature);
      if (state === 'unseen' && !(await chain.blockhashValid(sale.payment.blockhash))) {
        // asked again: it may have landed between the two reads
        state = await chain.signatureState(sale.signature);
        if (state === 'unseen') state = 'failed';
      }
      if (state === 'unseen') return;
      this.held.delete(sale.fingerprint);
      if (state === 'landed') {
        await this.ledger.settle(sale.fingerprint, sale.expiresAt);
        this.metrics.paymentReconciled(sale.route, sale.payment.requirement);
        if (sale.paymentId !== undefined) {
          const [name, value] = receiptHeader(sale.version, {
            success: true,
            transaction: sale.signature,
            network: sale.payment.requirement.network,
            payer: sale.payment.payer,
          });
          const headers = { [name]: value, 'cache-control': 'private, no-store' };
          await this.identifiers.storeAnswer(sale.paymentId, sale.fingerprint, headers, sale.body);
        }
        this.logger.log(`Solana settlement ${sale.signature} landed: ${sale.fingerprint} settled`);
      } else {
        await this.ledger.release(sale.fingerprint);
        await this.identifiers.release(sale.paymentId);
        this.logger.warn(`Solana settlement ${sale.signature} never landed: nothing was taken`);
      }
    } catch (error) {
      this.logger.warn(`cannot reconcile ${sale.fingerprint} yet: ${remoteText(error)}`);
    }
  }

  private stopTimer(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
