/** Where a payment stands in this service, keyed by its fingerprint. */
export type ClaimResult = 'claimed' | 'in_flight' | 'settled';

/** A response already sold under a client's payment-identifier, to be served again for free. */
export interface StoredResponse {
  readonly fingerprint: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/**
 * The money-safety state: one in-flight claim per payment (so concurrent copies cannot all run
 * the handler), settled payments (so a replay is refused before it reaches the facilitator),
 * and responses stored under payment-identifier ids. An interface so several instances can
 * share one implementation (Redis) later.
 */
export interface PaymentLedger {
  /** Atomically claims a payment for one request; anything but 'claimed' means refuse it. */
  claim(fingerprint: string): Promise<ClaimResult>;
  /** Gives a claim back: the payment was not settled and may be presented again. */
  release(fingerprint: string): Promise<void>;
  /** Records a settled payment until `expiresAt` (epoch ms), after which it cannot verify anyway. */
  settle(fingerprint: string, expiresAt: number): Promise<void>;
  findResponse(paymentId: string): Promise<StoredResponse | undefined>;
  storeResponse(paymentId: string, response: StoredResponse, expiresAt: number): Promise<void>;
}

export const PAYMENT_LEDGER = Symbol('PaymentLedger');

interface Expiring<T> {
  readonly value: T;
  readonly expiresAt: number;
}

const SWEEP_EVERY_MS = 60_000;

/** Single-process ledger. Claims are synchronous under the hood, so they are atomic. */
export class InMemoryPaymentLedger implements PaymentLedger {
  private lastSweep = 0;
  private readonly inFlight = new Set<string>();
  private readonly settled = new Map<string, number>();
  private readonly responses = new Map<string, Expiring<StoredResponse>>();

  constructor(private readonly now: () => number = Date.now) {}

  claim(fingerprint: string): Promise<ClaimResult> {
    this.sweep();
    const settledUntil = this.settled.get(fingerprint);
    if (settledUntil !== undefined && settledUntil > this.now()) return Promise.resolve('settled');
    if (this.inFlight.has(fingerprint)) return Promise.resolve('in_flight');
    this.inFlight.add(fingerprint);
    return Promise.resolve('claimed');
  }

  release(fingerprint: string): Promise<void> {
    this.inFlight.delete(fingerprint);
    return Promise.resolve();
  }

  settle(fingerprint: string, expiresAt: number): Promise<void> {
    this.inFlight.delete(fingerprint);
    this.settled.set(fingerprint, expiresAt);
    return Promise.resolve();
  }

  findResponse(paymentId: string): Promise<StoredResponse | undefined> {
    const entry = this.responses.get(paymentId);
    return Promise.resolve(
      entry !== undefined && entry.expiresAt > this.now() ? entry.value : undefined,
    );
  }

  storeResponse(paymentId: string, response: StoredResponse, expiresAt: number): Promise<void> {
    this.responses.set(paymentId, { value: response, expiresAt });
    return Promise.resolve();
  }

  /** Drops expired entries, at most once a minute, so memory stays bounded by the expiry window. */
  private sweep(): void {
    const now = this.now();
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    for (const [fingerprint, expiresAt] of this.settled) {
      if (expiresAt <= now) this.settled.delete(fingerprint);
    }
    for (const [id, entry] of this.responses) {
      if (entry.expiresAt <= now) this.responses.delete(id);
    }
  }
}
