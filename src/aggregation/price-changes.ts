/** One symbol's aggregated price as a ticker answer states it. */
export interface PriceChange {
  readonly symbol: string;
  /** 8-decimal, as tickers give it. */
  readonly price: number;
  /** ms, the ticker answer's timestamp semantics. */
  readonly timestamp: number;
  readonly venues: number;
  readonly spread: number | null;
}

/**
 * Every change of a symbol's aggregated price, on every instance (polling the shared snapshot
 * store every ~100 ms on instances that do not aggregate themselves).
 */
export abstract class PriceChanges {
  abstract subscribe(
    symbols: readonly string[],
    listener: (change: PriceChange) => void,
  ): () => void;
  abstract current(symbol: string): PriceChange | undefined;
}
