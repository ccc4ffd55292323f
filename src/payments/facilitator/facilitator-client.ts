import { AsyncLocalStorage } from 'node:async_hooks';
import { FacilitatorResponseError, type FacilitatorClient } from '@x402/core/server';
import {
  SettleError,
  VerifyError,
  type PaymentPayload,
  type PaymentRequirements,
  type SettleResponse,
  type SupportedResponse,
  type VerifyResponse,
} from '@x402/core/types';
import { BaseError, isHex, keccak256, type TransactionReceipt } from 'viem';
import { remoteText } from '../../common/remote-text.js';

/**
 * What one settlement did on chain, as far as this process could see: the embedded facilitator
 * records whether a transaction was (or may have been) sent, its hash and its receipt. For a
 * facilitator over HTTP (`observed` stays false) only its answers are seen: any answer that names
 * a transaction or says `settlement_pending` marks the settlement as broadcast, even when a later
 * answer (the SDK asks again after a pending one) is a refusal.
 */
export interface SettlementTrace {
  observed: boolean;
  broadcast: boolean;
  /**
   * Given up on before anything was sent (see abandonUnsent): the embedded facilitator then
   * refuses to prepare its transaction, so nothing ever moves for it.
   */
  abandoned?: boolean;
  /**
   * The embedded facilitator's transaction passed its gas estimate and is taking an account
   * nonce: from here it is signed and sent (a nonce taken and never sent would hold back every
   * later transaction of the settling key). It can no longer be abandoned.
   */
  committed?: boolean;
  transaction?: `0x${string}`;
  receipt?: TransactionReceipt;
}

/** The trace of the settlement running in the current async context, if one is being traced. */
export const settlementTraces = new AsyncLocalStorage<SettlementTrace>();

/**
 * Whether a failed settlement may have moved money. The embedded facilitator: every chain call
 * was seen, so only a send that did not end in a revert. Over HTTP: a transaction named in any
 * answer, a pending answer, or a reason that is not one of the scheme's `preBroadcast` reasons
 * (the facilitator's own checks, made before anything is sent).
 */
export function mayHaveSent(
  settlement: Pick<SettleResponse, 'transaction'>,
  trace: SettlementTrace,
  reason: string,
  preBroadcast: ReadonlySet<string>,
): boolean {
  if (trace.observed) return trace.broadcast && trace.receipt?.status !== 'reverted';
  return trace.broadcast || settlement.transaction !== '' || !preBroadcast.has(reason);
}

/**
 * Gives up on a settlement whose transaction has not left yet, so that it never will: true when
 * this process watches its chain calls (the embedded facilitator) and nothing was sent. A
 * facilitator over HTTP may be sending as we speak: false, and the settlement is waited for.
 */
export function abandonUnsent(trace: SettlementTrace): boolean {
  if (!trace.observed || trace.committed === true || trace.broadcast) return false;
  trace.abandoned = true;
  return true;
}

/** Thrown instead of sending the transaction of an abandoned settlement. */
export class SettlementAbandonedError extends Error {
  constructor() {
    super('settlement abandoned before its transaction was sent');
    this.name = 'SettlementAbandonedError';
  }
}

export type Operation = 'verify' | 'settle' | 'supported';

/**
 * The facilitator could not be asked (down, unreachable, timing out, answering garbage).
 * Extends the SDK's boundary error so its HTTP server passes it through instead of turning it
 * into a 402; the guard answers 503 before a settlement, the interceptor 502 during one.
 */
export class FacilitatorUnavailableError extends FacilitatorResponseError {
  constructor(
    readonly operation: Operation,
    cause: unknown,
  ) {
    super(`facilitator ${operation} failed: ${describeCause(cause)}`);
    this.name = 'FacilitatorUnavailableError';
  }
}

/** The SDK wraps a facilitator it could not ask in its own error: look for ours in the causes. */
export function isFacilitatorUnreachable(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof FacilitatorUnavailableError) return true;
  }
  return false;
}

/** An error's message with its cause's, as remote text, for logs and start-up sentences. */
export function reasonOf(error: unknown): string {
  const cause =
    error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return remoteText(error instanceof Error ? `${error.message}${cause}` : error);
}

/** viem's short message: its long one names the RPC URL, which can carry the provider's key. */
function describeCause(cause: unknown): string {
  return remoteText(cause instanceof BaseError ? cause.shortMessage : cause);
}

/**
 * Marks the traced settlement as broadcast the moment a raw transaction leaves for the RPC:
 * from then on a failure cannot prove nothing was sent. Failures before it (gas estimation,
 * nonce) prove the opposite.
 */
export function traceSend(method: string, params: unknown): void {
  const trace = settlementTraces.getStore();
  if (trace === undefined || method !== 'eth_sendRawTransaction') return;
  trace.broadcast = true;
  // the hash of a signed transaction is the hash of its bytes: known even when the RPC's answer
  // is lost, so an unknown outcome can name it and be reconciled by it
  const raw: unknown = Array.isArray(params) ? params[0] : undefined;
  if (typeof raw === 'string' && isHex(raw)) trace.transaction ??= keccak256(raw);
}

/** A remote facilitator's answer that names a transaction, or says one is pending, was sent. */
function traceRemoteAnswer(answer: Pick<SettleResponse, 'transaction' | 'errorReason'>): void {
  const trace = settlementTraces.getStore();
  if (trace === undefined) return;
  const transaction = typeof answer.transaction === 'string' ? answer.transaction : '';
  if (transaction !== '' || answer.errorReason === 'settlement_pending') trace.broadcast = true;
  if (/^0x[0-9a-fA-F]{64}$/.test(transaction)) trace.transaction ??= transaction as `0x${string}`;
}

/**
 * Sends a settlement's transaction and records it. Everything that can refuse it (gas and fee
 * estimation, at the real fee: a payer contract could accept its signature only in a free
 * simulation) runs in `prepare`, before the settlement is committed; committing takes an account
 * nonce, and after it only signing and the send remain, so a transaction the chain refuses
 * reverts on chain instead of leaving a nonce taken and never sent (which would hold back every
 * later transaction of the settling key until another one filled it). An abandoned settlement's
 * transaction is not prepared at all.
 */
export async function traceTransaction<P>(
  prepare: () => Promise<P>,
  send: (prepared: P) => Promise<`0x${string}`>,
): Promise<`0x${string}`> {
  if (settlementTraces.getStore()?.abandoned === true) throw new SettlementAbandonedError();
  const prepared = await prepare();
  const committing = settlementTraces.getStore();
  if (committing?.abandoned === true) throw new SettlementAbandonedError();
  if (committing !== undefined) committing.committed = true;
  const hash = await send(prepared);
  const trace = settlementTraces.getStore();
  if (trace !== undefined) {
    // a hash came back: sent, however the request was made
    trace.broadcast = true;
    trace.transaction = hash;
  }
  return hash;
}

export async function traceReceipt(
  wait: () => Promise<TransactionReceipt>,
): Promise<TransactionReceipt> {
  const receipt = await wait();
  const trace = settlementTraces.getStore();
  if (trace !== undefined && receipt.transactionHash === trace.transaction) trace.receipt = receipt;
  return receipt;
}

/**
 * For facilitators over HTTP: every failure to get an answer becomes FacilitatorUnavailableError;
 * a verdict sent back with an error status (VerifyError, SettleError) stays a verdict.
 */
export class HttpFacilitatorGuard implements FacilitatorClient {
  constructor(private readonly inner: FacilitatorClient) {}

  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    return guarded('verify', () => this.inner.verify(payload, requirements));
  }

  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    return guarded('settle', async () => {
      try {
        const answer = await this.inner.settle(payload, requirements);
        traceRemoteAnswer(answer);
        return answer;
      } catch (error) {
        if (error instanceof SettleError) traceRemoteAnswer(error);
        throw error;
      }
    });
  }

  getSupported(): Promise<SupportedResponse> {
    return guarded('supported', () => this.inner.getSupported());
  }
}

async function guarded<T>(operation: Operation, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof VerifyError || error instanceof SettleError) throw error;
    throw new FacilitatorUnavailableError(operation, error);
  }
}
