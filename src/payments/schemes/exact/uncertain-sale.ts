import type { UncertainSaleRecord } from '../../ledger/payment-ledger.js';
import type { AcceptedPayment } from './payment-acceptance.js';

/**
 * An `exact` EVM sale whose settlement outcome was unknown, as the ledger keeps it: the accepted
 * payment (its authorization is looked up on chain) and the transaction, when one was known to be
 * sent. It carries no `kind`, as records written before kinds existed do not.
 */
export interface UncertainSale extends UncertainSaleRecord {
  readonly payment: AcceptedPayment;
  /** The settlement transaction, if one was known to be sent when the request was answered. */
  readonly transaction?: `0x${string}`;
}

/** Whether an uncertain sale the ledger keeps is an `exact` EVM one (SettlementReconciler's). */
export function isExactSale(record: UncertainSaleRecord): record is UncertainSale {
  return record.kind === undefined;
}
