import type { ProtocolVersion } from '../paywall/x402-wire.js';

/** Where a payment stands in this service, keyed by its fingerprint. */
export type ClaimResult = 'claimed' | 'in_flight' | 'settled' | 'uncertain';

/** A response already sold under a client's payment-identifier, to be served again for free. */
export interface StoredResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/**
 * What a payment-identifier is bound to: one payment, signed once, for one resource. The
 * signature is part of it because the id, payer and nonce are public: a copy with a corrupted
 * signature is another payment, not a retry.
 */
export interface PaymentIdBinding {
  readonly fingerprint: string;
  readonly signatureDigest: string;
  readonly resource: string;
}

/**
 * A sale whose settlement outcome was unknown when its request was answered, as the ledger keeps
 * it until the payment expires: what every scheme's record has, and the scheme's own fields (its
 * payment, a transaction to look up), which the ledger keeps as they are without reading them.
 * Each scheme's reconciler knows its own records (by `kind`) and finds their outcome on chain.
 */
export interface UncertainSaleRecord {
  readonly fingerprint: string;
  readonly expiresAt: number;
  /** Which scheme's record this is, as that scheme names it. */
  readonly kind?: string;
  /** Its payment-identifier, if the client sent one. */
  readonly paymentId?: string;
  /** The paid route's pattern, for metrics and the sale's log line. */
  readonly route: string;
  /** The x402 version the client paid with: its receipt header is named by it. */
  readonly version: ProtocolVersion;
  /** The answer the payment bought. */
  readonly body: unknown;
}

export type PaymentIdClaim =
  | { readonly kind: 'claimed' }
  | { readonly kind: 'in_flight' }
  | { readonly kind: 'uncertain' }
  | { readonly kind: 'conflict' }
  | { readonly kind: 'stored'; readonly response: StoredResponse };

/**
 * The money-safety state: one claim per payment (so concurrent copies cannot all run the
 * handler), settled payments (refused before they reach the facilitator), payments whose
 * settlement outcome is unknown (refused too: they may have been taken), and payment-identifier
 * ids with the response they bought. Every entry expires when its payment could no longer
 * settle anyway. An interface so several instances can share one implementation later.
 */
export interface PaymentLedger {
  /** Atomically claims a payment for one request; anything but 'claimed' means refuse it. */
  claim(fingerprint: string, expiresAt: number): Promise<ClaimResult>;
  /** Gives a claim back: nothing was settled, the payment may be presented again. */
  release(fingerprint: string): Promise<void>;
  settle(fingerprint: string, expiresAt: number): Promise<void>;
  /**
   * The facilitator may or may not have moved the money: never accept this payment again, keep
   * the sale for whichever instance reconciles it, and make its payment-identifier (if still
   * bound to this payment) wait. 'resolved' when the payment is already known settled: nothing
   * is written, so a late or repeated record never reopens a reconciled sale.
   */
  markUncertain(sale: UncertainSaleRecord): Promise<'recorded' | 'resolved'>;
  /** The uncertain sales not yet resolved or expired, for reconciliation. */
  uncertainSales(): Promise<UncertainSaleRecord[]>;
  /**
   * The chain shows an uncertain payment settled: refused as settled from now on. False when it
   * was already recorded settled (another reconciler was first): the sale is counted once.
   */
  resolveSettled(fingerprint: string, expiresAt: number): Promise<boolean>;
  /** Atomically binds a payment-identifier to a payment and resource, or says what it is bound to. */
  claimPaymentId(id: string, binding: PaymentIdBinding, expiresAt: number): Promise<PaymentIdClaim>;
  /** Frees an id whose request was not answered; never one with a stored or uncertain outcome. */
  releasePaymentId(id: string): Promise<void>;
  /** Whether an id holds a response it bought (to whichever payment it is bound); reads only. */
  hasStoredResponse(id: string): Promise<boolean>;
  /**
   * The chain shows an uncertain payment can never settle (past validBefore, unused): forget it
   * and its id, so a retry is answered on its merits (an expired authorization: 402) instead of
   * waiting for an outcome that is already known.
   */
  resolveNeverSettled(fingerprint: string, paymentId: string | undefined): Promise<void>;
  /**
   * Stores the response an id bought, only while the id is still bound to that payment: a late
   * reconciliation must not write one payer's response under an id that has expired and been
   * bound to another payment since.
   */
  storeResponse(
    id: string,
    fingerprint: string,
    response: StoredResponse,
    expiresAt: number,
  ): Promise<void>;
}

export const PAYMENT_LEDGER = Symbol('PaymentLedger');

const SWEEP_EVERY_MS = 60_000;

interface PaymentEntry {
  readonly state: Exclude<ClaimResult, 'claimed'>;
  readonly expiresAt: number;
}

interface PaymentIdEntry extends PaymentIdBinding {
  readonly response: StoredResponse | undefined;
  readonly uncertain: boolean;
  readonly expiresAt: number;
}

/** Single-process ledger. Each operation is synchronous under the hood, so claims are atomic. */
export class InMemoryPaymentLedger implements PaymentLedger {
  private lastSweep = 0;
  private readonly payments = new Map<string, PaymentEntry>();
  private readonly ids = new Map<string, PaymentIdEntry>();
  private readonly uncertain = new Map<string, UncertainSaleRecord>();

  constructor(private readonly now: () => number = Date.now) {}

  claim(fingerprint: string, expiresAt: number): Promise<ClaimResult> {
    this.sweep();
    const entry = this.live(this.payments, fingerprint);
    if (entry !== undefined) return Promise.resolve(entry.state);
    this.payments.set(fingerprint, { state: 'in_flight', expiresAt });
    return Promise.resolve('claimed');
  }

  release(fingerprint: string): Promise<void> {
    if (this.payments.get(fingerprint)?.state === 'in_flight') this.payments.delete(fingerprint);
    return Promise.resolve();
  }

  settle(fingerprint: string, expiresAt: number): Promise<void> {
    this.payments.set(fingerprint, { state: 'settled', expiresAt });
    return Promise.resolve();
  }

  markUncertain(sale: UncertainSaleRecord): Promise<'recorded' | 'resolved'> {
    if (this.live(this.payments, sale.fingerprint)?.state === 'settled') {
      return Promise.resolve('resolved');
    }
    this.payments.set(sale.fingerprint, { state: 'uncertain', expiresAt: sale.expiresAt });
    this.uncertain.set(sale.fingerprint, sale);
    const entry = sale.paymentId === undefined ? undefined : this.ids.get(sale.paymentId);
    if (sale.paymentId !== undefined && entry?.fingerprint === sale.fingerprint) {
      this.ids.set(sale.paymentId, { ...entry, uncertain: true });
    }
    return Promise.resolve('recorded');
  }

  uncertainSales(): Promise<UncertainSaleRecord[]> {
    return Promise.resolve(
      [...this.uncertain.keys()].flatMap((fingerprint) => {
        const sale = this.live(this.uncertain, fingerprint);
        return sale === undefined ? [] : [sale];
      }),
    );
  }

  resolveSettled(fingerprint: string, expiresAt: number): Promise<boolean> {
    this.uncertain.delete(fingerprint);
    const first = this.live(this.payments, fingerprint)?.state !== 'settled';
    this.payments.set(fingerprint, { state: 'settled', expiresAt });
    return Promise.resolve(first);
  }

  claimPaymentId(
    id: string,
    binding: PaymentIdBinding,
    expiresAt: number,
  ): Promise<PaymentIdClaim> {
    const entry = this.live(this.ids, id);
    if (entry === undefined) {
      this.ids.set(id, { ...binding, response: undefined, uncertain: false, expiresAt });
      return Promise.resolve({ kind: 'claimed' });
    }
    if (
      entry.fingerprint !== binding.fingerprint ||
      entry.signatureDigest !== binding.signatureDigest ||
      entry.resource !== binding.resource
    ) {
      return Promise.resolve({ kind: 'conflict' });
    }
    if (entry.response !== undefined) {
      return Promise.resolve({ kind: 'stored', response: entry.response });
    }
    return Promise.resolve({ kind: entry.uncertain ? 'uncertain' : 'in_flight' });
  }

  releasePaymentId(id: string): Promise<void> {
    const entry = this.ids.get(id);
    if (entry !== undefined && entry.response === undefined && !entry.uncertain)
      this.ids.delete(id);
    return Promise.resolve();
  }

  hasStoredResponse(id: string): Promise<boolean> {
    return Promise.resolve(this.live(this.ids, id)?.response !== undefined);
  }

  resolveNeverSettled(fingerprint: string, paymentId: string | undefined): Promise<void> {
    this.uncertain.delete(fingerprint);
    if (this.payments.get(fingerprint)?.state === 'uncertain') this.payments.delete(fingerprint);
    const entry = paymentId === undefined ? undefined : this.ids.get(paymentId);
    if (paymentId !== undefined && entry?.fingerprint === fingerprint && entry.uncertain) {
      this.ids.delete(paymentId);
    }
    return Promise.resolve();
  }

  storeResponse(
    id: string,
    fingerprint: string,
    response: StoredResponse,
    expiresAt: number,
  ): Promise<void> {
    const entry = this.live(this.ids, id);
    if (entry?.fingerprint === fingerprint) {
      this.ids.set(id, { ...entry, response, uncertain: false, expiresAt });
    }
    return Promise.resolve();
  }

  private live<T extends { readonly expiresAt: number }>(
    map: Map<string, T>,
    key: string,
  ): T | undefined {
    const entry = map.get(key);
    if (entry === undefined || entry.expiresAt > this.now()) return entry;
    map.delete(key);
    return undefined;
  }

  /** Drops expired entries, at most once a minute, so memory stays bounded by the expiry window. */
  private sweep(): void {
    const now = this.now();
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    const maps = [this.payments, this.ids, this.uncertain] as Map<string, { expiresAt: number }>[];
    for (const map of maps) {
      for (const [key, entry] of map) if (entry.expiresAt <= now) map.delete(key);
    }
  }
}
