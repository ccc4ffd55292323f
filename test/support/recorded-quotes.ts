import type { RawQuote } from '../../src/markets/price-source.js';
import { parseBinanceTickerPrices } from '../../src/markets/binance.source.js';
import { parseBitstampTickers } from '../../src/markets/bitstamp.source.js';
import { parseBybitTickers } from '../../src/markets/bybit.source.js';
import { parseCoinbaseProducts } from '../../src/markets/coinbase.source.js';
import { parseCoingeckoPrices } from '../../src/markets/coingecko.source.js';
import { parseGeminiPriceFeed } from '../../src/markets/gemini.source.js';
import { parseKrakenAssetPairs, parseKrakenTicker } from '../../src/markets/kraken.source.js';
import { parseKucoinAllTickers } from '../../src/markets/kucoin.source.js';
import { parseOkxTickers } from '../../src/markets/okx.source.js';
import { STABLECOIN_QUOTES } from '../../src/aggregation/aggregate.js';
import { loadFixture } from './fixtures.js';

/** Every built-in venue's recorded snapshot, through its own parser. */
export function recordedQuotes(receivedAt = Date.now()): RawQuote[] {
  return [
    ...parseCoinbaseProducts(loadFixture('coinbase'), receivedAt),
    ...parseKrakenTicker(
      loadFixture('kraken-ticker'),
      parseKrakenAssetPairs(loadFixture('kraken-assetpairs')),
      receivedAt,
    ),
    ...parseBitstampTickers(loadFixture('bitstamp'), receivedAt),
    ...parseGeminiPriceFeed(loadFixture('gemini'), receivedAt),
    ...parseBinanceTickerPrices(loadFixture('binance'), receivedAt),
    ...parseOkxTickers(loadFixture('okx'), receivedAt),
    ...parseBybitTickers(loadFixture('bybit'), receivedAt),
    ...parseKucoinAllTickers(loadFixture('kucoin'), receivedAt),
    ...parseCoingeckoPrices(loadFixture('coingecko'), receivedAt),
  ];
}

/**
 * Venues whose recorded quotes can price each symbol: USD quotes, and USDT/USDC quotes except
 * for the stablecoins themselves (priced from USD venues only).
 */
export function pricingVenuesBySymbol(quotes: readonly RawQuote[]): Map<string, Set<string>> {
  const venues = new Map<string, Set<string>>();
  for (const quote of quotes) {
    const stablecoin = (STABLECOIN_QUOTES as readonly string[]).includes(quote.symbol);
    if (quote.quote !== 'USD' && stablecoin) continue;
    venues.set(quote.symbol, (venues.get(quote.symbol) ?? new Set()).add(quote.source));
  }
  return venues;
}
