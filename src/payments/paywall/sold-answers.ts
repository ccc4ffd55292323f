import { Inject, Injectable, Logger } from '@nestjs/common';
import type { SettleResponse } from '@x402/core/types';
import { remoteText } from '../../common/remote-text.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import type { AcceptedPayment } from '../schemes/exact/payment-acceptance.js';
import {
  PAYMENT_LEDGER,
  type PaymentLedger,
  type UncertainSale,
} from '../ledger/payment-ledger.js';
import { settledBy } from '../schemes/exact/payment-settler.js';
import { receiptHeader, type ProtocolVersion } from './x402-wire.js';

/** How long a response sold under a payment-identifier is served again for free. */
const STORED_RESPONSE_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * What follows a proven sale, wherever it was proven: at once by the request that paid, or later
 * by whichever instance reconciled an uncertain one. The sale's log line, its receipt headers,
 * and the answer kept for payment-identifier retries.
 */
@Injectable()
export class SoldAnswers {
  private readonly logger = new Logger(SoldAnswers.name);

  constructor(
    @Inject(PAYMENT_LEDGER) private readonly ledger: PaymentLedger,
    private readonly metrics: MetricsService,
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

  /** The 200's headers: the settlement receipt, and never a cached copy. */
  receiptHeaders(version: ProtocolVersion, settlement: SettleResponse): Record<string, string> {
    const [name, value] = receiptHeader(version, settlement);
    return { [name]: value, 'cache-control': 'private, no-store' };
  }

  /** The money has moved: failing to store the response for retries must not cost the client its 200. */
  async storeForRetries(
    paymentId: string,
    fingerprint: string,
    headers: Record<string, string>,
    body: unknown,
  ): Promise<void> {
    try {
      await this.ledger.storeResponse(
        paymentId,
        fingerprint,
        { status: 200, headers, body },
        Date.now() + STORED_RESPONSE_TTL_MS,
      );
    } catch (error) {
      this.logger.error(
        `could not store the response for payment-identifier ${paymentId}: ${remoteText(error)}`,
      );
    }
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
    await this.storeForRetries(
      sale.paymentId,
      sale.fingerprint,
      this.receiptHeaders(sale.version, settlement),
      sale.body,
    );
  }
}
