import type { PriceSource, RawQuote } from './price-source.js';
import type { VenueConnection } from './venue-connection.js';
import { expectArray, expectRecord, isRecord, parseAmount, parsePrice } from './venue-json.js';

export const COINBASE_PRODUCTS_PATH = '/api/v3/brokerage/market/products';

/** Coinbase Advanced Trade public products: every product with its last price in one call. */
export class CoinbaseSource implements PriceSource {
  readonly id = 'coinbase';

  constructor(private readonly venue: VenueConnection) {}

  async fetchQuotes(): Promise<RawQuote[]> {
    const body = await this.venue.getJson(COINBASE_PRODUCTS_PATH);
    return parseCoinbaseProducts(body, this.venue.now());
  }
}

/**
 * Keeps online, tradable USD products. USDC products are left out: Coinbase books them as
 * aliases of the USD ones, so counting both would count one market twice.
 */
export function parseCoinbaseProducts(body: unknown, receivedAt: number): RawQuote[] {
  const products = expectArray(expectRecord(body, 'body').products, 'products');
  const quotes: RawQuote[] = [];
  for (const product of products) {
    if (!isRecord(product) || !isTradable(product)) continue;
    if (product.quote_currency_id !== 'USD' || typeof product.base_currency_id !== 'string')
      continue;
    const price = parsePrice(product.price);
    if (price === undefined) continue;
    quotes.push({
      source: 'coinbase',
      symbol: product.base_currency_id.toUpperCase(),
      quote: 'USD',
      price,
      volume: parseAmount(product.volume_24h),
      observedAt: receivedAt,
    });
  }
  return quotes;
}

function isTradable(product: Record<string, unknown>): boolean {
  return (
    product.status === 'online' &&
    product.trading_disabled !== true &&
    product.is_disabled !== true &&
    product.view_only !== true
  );
}
