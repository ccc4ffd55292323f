import type { AggregatedPrice, SymbolOutcome } from './aggregate.js';

/** What a request reads: the prices of the latest refresh, with last good prices carried over. */
export interface PriceSnapshot {
  /** Epoch milliseconds when this snapshot was aggregated. */
  readonly asOf: number;
  readonly prices: ReadonlyMap<string, AggregatedPrice>;
}

/**
 * Builds the next snapshot from a round's outcomes. A symbol the round could not price keeps
 * its previous price while that price is still fresh; a stale price is never carried.
 */
export function nextSnapshot(
  previous: PriceSnapshot | undefined,
  outcomes: ReadonlyMap<string, SymbolOutcome>,
  now: number,
  staleMs: number,
): PriceSnapshot {
  const prices = new Map<string, AggregatedPrice>();
  for (const [symbol, price] of previous?.prices ?? []) {
    if (isFresh(price, now, staleMs)) prices.set(symbol, price);
  }
  for (const [symbol, outcome] of outcomes) {
    if (outcome.status === 'priced') prices.set(symbol, outcome.price);
  }
  return { asOf: now, prices };
}

export function isFresh(price: AggregatedPrice, now: number, staleMs: number): boolean {
  return now - price.observedAt <= staleMs;
}
