import type { VenueQuote } from './price-source.js';
import { COINBASE_STREAM } from './coinbase.stream.js';
import type { JsonVenue } from './venue-definition.js';
import { expectArray, expectRecord, isRecord, parseAmount, parsePrice } from './venue-json.js';

/** Coinbase Advanced Trade public products: every product with its last price in one call. */
export const COINBASE: JsonVenue = {
  id: 'coinbase',
  summary: 'online USD products (USDC products are aliases of USD ones and are skipped)',
  defaultBaseUrl: 'https://api.coinbase.com',
  path: '/api/v3/brokerage/market/products',
  minIntervalMs: 1000,
  stream: { defaultUrl: 'wss://advanced-trade-ws.coinbase.com', protocol: COINBASE_STREAM },
  parse: parseCoinbaseProducts,
};

/**
 * Keeps online, tradable USD products. USDC products are left out: Coinbase books them as
 * aliases of the USD ones, so counting both would count one market twice.
 */
export function parseCoinbaseProducts(body: unknown, receivedAt: number): VenueQuote[] {
  const products = expectArray(expectRecord(body, 'body').products, 'products');
  const quotes: VenueQuote[] = [];
  for (const product of products) {
    if (!isRecord(product) || !isTradable(product)) continue;
    if (product.quote_currency_id !== 'USD' || typeof product.base_currency_id !== 'string')
      continue;
    const price = parsePrice(product.price);
    if (price === undefined) continue;
    quotes.push({
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
