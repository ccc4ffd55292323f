import { Inject, Injectable } from '@nestjs/common';
import type { AttestableAnswer, AttestedClaims } from './attestable-answer.js';
import { ATTESTATION_SIGNER, type AttestationSigner } from './attestation-signer.js';
import {
  encodePriceAttestation,
  fixedPointPrice,
  spreadBps,
  type PriceAttestationMessage,
} from './price-attestation.js';

/** Distinct keys signed per source at most; past it an answer is signed on its own. */
const MAX_KEYS_PER_SOURCE = 2_000;

const UINT16_MAX = 2 ** 16 - 1;

/**
 * Signs each answer once per source and key (`AttestableAnswer.claimsKey`): the header value is
 * kept with the source it was made from (and dropped with it), so a request reads a signature
 * instead of making one.
 */
@Injectable()
export class PriceAttestor {
  private readonly signed = new WeakMap<object, Map<string, Promise<string>>>();

  constructor(@Inject(ATTESTATION_SIGNER) private readonly signer: AttestationSigner | null) {}

  /** The Price-Attestation header for `answer`; undefined with ATTESTATION=off. */
  headerFor(answer: AttestableAnswer): Promise<string> | undefined {
    const signer = this.signer;
    if (signer === null) return undefined;
    const sign = () =>
      Promise.resolve()
        .then(() => signer.signPrices(attestedMessage(answer.attestedClaims())))
        .then(encodePriceAttestation);
    const claimsKey = answer.claimsKey;
    if (claimsKey === undefined) return sign();
    let byKey = this.signed.get(claimsKey.source);
    if (byKey === undefined) {
      byKey = new Map();
      this.signed.set(claimsKey.source, byKey);
    }
    const known = byKey.get(claimsKey.key);
    if (known !== undefined) return known;
    const signing = sign();
    if (byKey.size < MAX_KEYS_PER_SOURCE) {
      const kept = byKey;
      kept.set(claimsKey.key, signing);
      // a failure is not kept: the next request signs again
      signing.catch(() => kept.delete(claimsKey.key));
    }
    return signing;
  }
}

/** The EIP-712 message of `claims`: values by the fixed-point rule, spreads in basis points. */
export function attestedMessage(claims: AttestedClaims): PriceAttestationMessage {
  return {
    currency: claims.currency,
    // whole milliseconds, rounded down: never later than the inputs the claims name
    timestamp: BigInt(Math.floor(claims.timestamp)),
    prices: claims.values.map(({ symbol, value, venues = 0, spread = 0 }) => {
      if (!Number.isInteger(venues) || venues < 0 || venues > UINT16_MAX) {
        throw new RangeError(`${symbol}: ${venues} venues do not fit the attestation`);
      }
      return { symbol, price: fixedPointPrice(value), venues, spreadBps: spreadBps(spread) };
    }),
  };
}
