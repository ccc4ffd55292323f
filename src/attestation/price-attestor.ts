import { Inject, Injectable } from '@nestjs/common';
import type { PriceSnapshot } from '../aggregation/price-snapshot.js';
import type { TickerQuotes } from '../tickers/ticker-quotes.service.js';
import { ATTESTATION_SIGNER, type AttestationSigner } from './attestation-signer.js';
import {
  encodePriceAttestation,
  fixedPointPrice,
  spreadBps,
  type PriceAttestationMessage,
} from './price-attestation.js';

/** Distinct selections signed per snapshot at most; past it an answer is signed on its own. */
const MAX_SELECTIONS_PER_SNAPSHOT = 2_000;

/**
 * Signs each answer once per snapshot and selection: the header value is kept with the snapshot
 * it was made from (and dropped with it), so a request reads a signature instead of making one.
 */
@Injectable()
export class PriceAttestor {
  private readonly signed = new WeakMap<PriceSnapshot, Map<string, Promise<string>>>();

  constructor(@Inject(ATTESTATION_SIGNER) private readonly signer: AttestationSigner | null) {}

  /** The Price-Attestation header for `quotes`; undefined with ATTESTATION=off. */
  headerFor(quotes: TickerQuotes): Promise<string> | undefined {
    const signer = this.signer;
    if (signer === null) return undefined;
    const selection = Object.keys(quotes.prices).join(',');
    let bySelection = this.signed.get(quotes.snapshot);
    if (bySelection === undefined) {
      bySelection = new Map();
      this.signed.set(quotes.snapshot, bySelection);
    }
    const known = bySelection.get(selection);
    if (known !== undefined) return known;
    const signing = signer.signPrices(attestedMessage(quotes)).then(encodePriceAttestation);
    if (bySelection.size < MAX_SELECTIONS_PER_SNAPSHOT) {
      bySelection.set(selection, signing);
      // a failure is not kept: the next request signs again
      signing.catch(() => bySelection.delete(selection));
    }
    return signing;
  }
}

/**
 * What an answer's attestation says: its prices (body order), venues and spread, and as its time
 * the oldest input behind any of those prices (never later than the snapshot's), so that a
 * contract's `maxAgeSeconds` bounds how old every venue quote behind the answer is.
 */
export function attestedMessage(quotes: TickerQuotes): PriceAttestationMessage {
  let oldestInputAt = quotes.snapshot.asOf;
  const prices = Object.entries(quotes.prices).map(([symbol, price]) => {
    const aggregated = quotes.snapshot.prices.get(symbol);
    if (aggregated === undefined) throw new Error(`${symbol} is not in the snapshot`);
    if (!Number.isFinite(aggregated.oldestInputAt)) {
      throw new Error(`${symbol} has no time for its oldest input`);
    }
    oldestInputAt = Math.min(oldestInputAt, aggregated.oldestInputAt);
    return {
      symbol,
      price: fixedPointPrice(price),
      venues: aggregated.sources.length,
      spreadBps: spreadBps(aggregated.spread),
    };
  });
  // whole milliseconds, rounded down: never later than the input
  return { currency: 'USD', timestamp: BigInt(Math.floor(oldestInputAt)), prices };
}
