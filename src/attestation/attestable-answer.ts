/**
 * What a paid answer says its Price-Attestation signs. The resolved value of an `@Attested()`
 * route implements `AttestableAnswer`; the attestation module turns its claims into the
 * EIP-712 message of price-attestation.ts and never needs to know what the product is.
 */

/** One signed value: a `PricePoint` of the message. */
export interface AttestedValue {
  /** What the value is of, as the body names it (a symbol, a word): the point's `symbol`. */
  readonly symbol: string;
  /** The value as the body writes it, in the claims' currency: the point's `price` (8 decimals). */
  readonly value: number;
  /** How many independent sources agreed on it: the point's `venues`; 0 where that does not apply. */
  readonly venues?: number;
  /** (highest − lowest of those sources) / value, a fraction: the point's `spreadBps`; 0 where it does not apply. */
  readonly spread?: number;
}

/** Everything one answer's attestation signs. */
export interface AttestedClaims {
  readonly currency: string;
  /** When the values held, epoch milliseconds: the message's `timestamp`. */
  readonly timestamp: number;
  /** In the body's order. */
  readonly values: readonly AttestedValue[];
}

/** A resolved answer that says what its attestation signs. */
export interface AttestableAnswer {
  attestedClaims(): AttestedClaims;
  /**
   * Answers with the same `source` object and the same `key` make the same claims: the signature
   * is made once and kept while `source` lives (a price snapshot, say). Absent: signed per answer.
   */
  readonly claimsKey?: { readonly source: object; readonly key: string };
}

export function isAttestable(value: unknown): value is AttestableAnswer {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<AttestableAnswer>).attestedClaims === 'function'
  );
}
