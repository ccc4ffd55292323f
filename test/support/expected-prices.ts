import { fixtureCopy } from './fixtures.js';
import { servedPrice } from '../../src/common/price-precision.js';

/**
 * Each default venue's recorded USD price for a symbol, read straight from the fixtures
 * (not through the service's parsers), for computing what the service should serve.
 */
export function recordedUsdPrices(
  symbol: string,
): Record<'coinbase' | 'kraken' | 'bitstamp', number> {
  const coinbase = fixtureCopy<{ products: { product_id: string; price: string }[] }>(
    'coinbase',
  ).products.find((product) => product.product_id === `${symbol}-USD`);
  const pairs = fixtureCopy<{ result: Record<string, { wsname: string }> }>(
    'kraken-assetpairs',
  ).result;
  const krakenBase = symbol === 'BTC' ? 'XBT' : symbol === 'DOGE' ? 'XDG' : symbol;
  const krakenKey = Object.keys(pairs).find((key) => pairs[key]?.wsname === `${krakenBase}/USD`);
  const kraken = fixtureCopy<{ result: Record<string, { c: string[] }> }>('kraken-ticker').result[
    krakenKey ?? ''
  ]?.c[0];
  const bitstamp = fixtureCopy<{ pair: string; last: string }[]>('bitstamp').find(
    (row) => row.pair === `${symbol}/USD`,
  );
  if (coinbase === undefined || kraken === undefined || bitstamp === undefined) {
    throw new Error(`${symbol} is not recorded at all three default venues`);
  }
  return {
    coinbase: Number(coinbase.price),
    kraken: Number(kraken),
    bitstamp: Number(bitstamp.last),
  };
}

export function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function expectRelativelyClose(actual: number, expected: number, tolerance = 1e-9): void {
  if (Math.abs(actual - expected) > Math.abs(expected) * tolerance) {
    throw new Error(`expected ${actual} to be within ${tolerance} (relative) of ${expected}`);
  }
}

/**
 * `served` is a price as the API delivers it (6 significant digits, whole cents at least) and
 * the delivery of `aggregated`, the full-precision result of the pricing policy.
 */
export function expectServedPrice(served: number, aggregated: number): void {
  if (servedPrice(served) !== served) {
    throw new Error(`${served} is not at the served precision (${servedPrice(served)})`);
  }
  expectRelativelyClose(served, servedPrice(aggregated));
}
