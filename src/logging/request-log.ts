/**
 * The log store of the request being served, kept in an AsyncLocalStorage: its id, for every line
 * written while serving it, and what its access line adds (a sale's payer, amount and network).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** What a sale adds to its request's access line. */
export interface SaleNote {
  /** The buyer's address. */
  readonly payer: string;
  /** The price paid, in the asset's atomic units. */
  readonly amount: string;
  /** CAIP-2 network of the payment, e.g. `eip155:84532`. */
  readonly network: string;
}

/** One request's log store; the access line reads it once the answer is sent. */
export interface RequestLog {
  readonly requestId: string;
  sale: SaleNote | undefined;
}

const requestLogs = new AsyncLocalStorage<RequestLog>();

/** Runs `serve` with `log` as the store of everything it logs, however asynchronous. */
export function runWithRequestLog(log: RequestLog, serve: () => void): void {
  requestLogs.run(log, serve);
}

/** The id of the request being served, for its log lines; none outside a request. */
export function currentRequestId(): string | undefined {
  return requestLogs.getStore()?.requestId;
}

/**
 * Notes a sale on the request being served, so that its access line names the payer, amount and
 * network. Outside a request (a sale reconciled in the background) there is no access line: nothing.
 */
export function noteSale(sale: SaleNote): void {
  const log = requestLogs.getStore();
  if (log !== undefined)
    log.sale = { payer: sale.payer, amount: sale.amount, network: sale.network };
}
