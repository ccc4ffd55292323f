import { Inject, Injectable } from '@nestjs/common';
import type { AttestableAnswer, AttestedClaims } from '../attestation/index.js';
import { isFresh, type PriceSnapshot } from '../aggregation/price-snapshot.js';
import { SNAPSHOT_STORE, type SnapshotStore } from '../aggregation/snapshot-store.js';
import { AssetCatalogue } from '../assets/asset-catalogue.js';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { PRICING_SETTINGS, type PricingSettings } from '../aggregation/pricing.settings.js';
import { servedPrice } from '../common/price-precision.js';

/** Which symbols a ticker request asks for. */
export type TickerSelection =
  | { readonly kind: 'one'; readonly symbol: string }
  | { readonly kind: 'many'; readonly symbols: readonly string[] }
  | { readonly kind: 'all' };

/**
 * The prices a request will be answered with, all from one snapshot, and what their
 * attestation signs: each price (body order) with its venues and spread, at its oldest input's time.
 */
export class TickerQuotes implements AttestableAnswer {
  constructor(
    readonly timestamp: string,
    readonly prices: Record<string, number>,
    /** The snapshot the prices come from: their venues and spread. */
    readonly snapshot: PriceSnapshot,
  ) {}

  /**
   * The prices in body order with their venues and spread; as their time the oldest input behind
   * any of them (never later than the snapshot's), so that a contract's `maxAgeSeconds` bounds how
   * old every venue quote behind the answer is.
   */
  attestedClaims(): AttestedClaims {
    let oldestInputAt = this.snapshot.asOf;
    const values = Object.entries(this.prices).map(([symbol, value]) => {
      const aggregated = this.snapshot.prices.get(symbol);
      if (aggregated === undefined) throw new Error(`${symbol} is not in the snapshot`);
      if (!Number.isFinite(aggregated.oldestInputAt)) {
        throw new Error(`${symbol} has no time for its oldest input`);
      }
      oldestInputAt = Math.min(oldestInputAt, aggregated.oldestInputAt);
      return { symbol, value, venues: aggregated.sources.length, spread: aggregated.spread };
    });
    return { currency: 'USD', timestamp: oldestInputAt, values };
  }

  /** The same symbols from the same snapshot claim the same: signed once per snapshot. */
  get claimsKey(): { source: object; key: string } {
    return { source: this.snapshot, key: Object.keys(this.prices).join(',') };
  }
}

/**
 * Decides whether a ticker request can be answered (404 for unknown symbols, 503 when the
 * snapshot has no fresh price) and picks the prices, reading only the snapshot store.
 */
@Injectable()
export class TickerQuotesService {
  constructor(
    private readonly catalogue: AssetCatalogue,
    @Inject(SNAPSHOT_STORE) private readonly store: SnapshotStore,
    @Inject(PRICING_SETTINGS.token) private readonly pricing: PricingSettings,
  ) {}

  async quote(selection: TickerSelection): Promise<TickerQuotes> {
    const { snapshot, fresh } = await this.decide(selection);
    const prices = new Map<string, number>();
    for (const [symbol, price] of fresh) prices.set(symbol, servedPrice(price));
    return new TickerQuotes(
      new Date(snapshot.asOf).toISOString(),
      Object.fromEntries(prices),
      snapshot,
    );
  }

  /**
   * Whether `selection` can be answered now, with exactly the refusals of `quote` (404, 503),
   * without building the answer: an unpaid request gets its 402 only when a payment would buy
   * a price.
   */
  async check(selection: TickerSelection): Promise<void> {
    await this.decide(selection);
  }

  /** The snapshot and the fresh raw prices `selection` is answered from, or the refusal. */
  private async decide(
    selection: TickerSelection,
  ): Promise<{ snapshot: PriceSnapshot; fresh: Map<string, number> }> {
    const symbols = this.requestedSymbols(selection);
    const snapshot = await this.store.current();
    const fresh = this.freshPrices(snapshot, symbols);
    if (snapshot === undefined) throw this.unavailable('No prices have been aggregated yet.');
    if (selection.kind === 'all') {
      if (fresh.size * 2 < symbols.length) {
        throw this.unavailable(
          `Only ${fresh.size} of ${symbols.length} assets have a trustworthy price.`,
        );
      }
    } else {
      const missing = symbols.filter((symbol) => !fresh.has(symbol));
      if (missing.length > 0) {
        throw this.unavailable(`No trustworthy price for ${missing.join(', ')} right now.`);
      }
    }
    return { snapshot, fresh };
  }

  private requestedSymbols(selection: TickerSelection): readonly string[] {
    if (selection.kind === 'all') return this.catalogue.symbols;
    const symbols = selection.kind === 'one' ? [selection.symbol] : selection.symbols;
    const unknown = symbols.filter((symbol) => !this.catalogue.has(symbol));
    if (unknown.length > 0) {
      throw new ApiError(
        ErrorCode.UnknownSymbol,
        `${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not supported; GET /v1/assets lists the supported symbols.`,
      );
    }
    return symbols;
  }

  private freshPrices(
    snapshot: PriceSnapshot | undefined,
    symbols: readonly string[],
  ): Map<string, number> {
    const now = Date.now();
    const prices = new Map<string, number>();
    for (const symbol of symbols) {
      const price = snapshot?.prices.get(symbol);
      if (price !== undefined && isFresh(price, now, this.pricing.staleMs)) {
        prices.set(symbol, price.price);
      }
    }
    return prices;
  }

  private unavailable(detail: string): ApiError {
    const retryAfter = Math.max(1, Math.ceil(this.pricing.refreshMs / 1000));
    return new ApiError(ErrorCode.PriceUnavailable, detail, { 'retry-after': String(retryAfter) });
  }
}
