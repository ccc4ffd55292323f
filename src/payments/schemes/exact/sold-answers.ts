import { Injectable, Logger } from '@nestjs/common';
import type { SettleResponse } from '@x402/core/types';
import { MetricsService } from '../../../metrics/metrics.service.js';
import type { AcceptedPayment } from './payment-acceptance.js';
import type { UncertainSale } from './uncertain-sale.js';
import { PaymentIdentifiers } from '../../paywall/payment-identifiers.js';
import { settledBy } from './payment-settler.js';
import { receiptHeaders } from '../../paywall/x402-wire.js';

/**
 * What follows a proven `exact` sale, wherever it was proven: at once by the request that paid,
 * or later by whichever instance reconciled an uncertain one. The sale's log line, its receipt
 * headers, and the answer kept for payment-identifier retries.
 */
@Injectable()
export class SoldAnswers {
  private readonly logger = new Logger(SoldAnswers.name);

  constructor(
    private readonly metrics: MetricsService,
    private readonly identifiers: PaymentIdentifiers,
  ) {}

  /** One line per sale: who paid what for which route, and the transaction; never the signature. */
  logSale(route: string, payment: AcceptedPayment, settlement: SettleResponse): void {
    const { requirement, authorization } = payment;
    this.logger.log('payment settled', {
      payer: authorization.from,
      route,
      amount: requirement.amount,
      asset: requirement.asset,
      scheme: requirement.scheme,
      network: requirement.network,
      transaction: settlement.transaction,
    });
  }

  /**
   * The chain showed an uncertain sale paid by `transaction`: counted as revenue, logged, and
   * its answer kept for a retry with its payment-identifier.
   */
  async reconciled(sale: UncertainSale, transaction: `0x${string}`): Promise<void> {
    const settlement = settledBy(transaction, sale.payment);
    this.metrics.paymentReconciled(sale.route, sale.payment.requirement);
    this.logSale(sale.route, sale.payment, settlement);
    if (sale.paymentId === undefined) return;
    await this.identifiers.storeAnswer(
      sale.paymentId,
      sale.fingerprint,
      receiptHeaders(sale.version, settlement),
      sale.body,
    );
  }
}
