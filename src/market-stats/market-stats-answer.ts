import type { AttestableAnswer, AttestedClaims } from '../attestation/index.js';
import type { TickerQuotes } from '../tickers/ticker-quotes.service.js';
import { servedPrice } from '../common/price-precision.js';
import type { SymbolStatistics } from './market-stats.service.js';
import type { MarketDto, MarketsDto } from './market-stats.dto.js';

/**
 * A market-statistics answer: each symbol's price as the tickers serve it (same snapshot, same
 * rounding) with its 24-hour figures. Its attestation signs the prices, exactly as a ticker
 * answer for the same symbols from the same snapshot does.
 */
export class MarketStatsAnswer implements AttestableAnswer {
  constructor(
    private readonly quotes: TickerQuotes,
    private readonly statistics: ReadonlyMap<string, SymbolStatistics>,
  ) {}

  get body(): MarketsDto {
    const markets: Record<string, MarketDto> = {};
    for (const [symbol, price] of Object.entries(this.quotes.prices)) {
      const aggregated = this.quotes.snapshot.prices.get(symbol);
      const statistics = this.statistics.get(symbol);
      if (aggregated === undefined || statistics === undefined) {
        throw new Error(`${symbol} has no price or statistics to answer with`);
      }
      markets[symbol] = marketOf(price, aggregated.spread, statistics);
    }
    return { timestamp: this.quotes.timestamp, currency: 'USD', markets };
  }

  attestedClaims(): AttestedClaims {
    return this.quotes.attestedClaims();
  }

  get claimsKey(): { source: object; key: string } {
    return this.quotes.claimsKey;
  }
}

/** One symbol's entry: prices at the served precision, the change from the served figures. */
export function marketOf(price: number, spread: number, statistics: SymbolStatistics): MarketDto {
  const open = statistics.open24h === null ? null : servedPrice(statistics.open24h);
  const change = open === null ? null : servedPrice(price - open);
  return {
    price,
    open24h: open,
    high24h: statistics.high24h === null ? null : servedPrice(statistics.high24h),
    low24h: statistics.low24h === null ? null : servedPrice(statistics.low24h),
    change24h: change,
    changePct24h: open === null ? null : roundTo(((price - open) / open) * 100, 2),
    volume24h: statistics.volume24h === null ? null : roundTo(statistics.volume24h, 8),
    volumeUsd24h: statistics.volumeUsd24h === null ? null : roundTo(statistics.volumeUsd24h, 2),
    venues: statistics.venues,
    spreadBps: Math.round(spread * 10_000),
    marketCapUsd: statistics.marketCapUsd === null ? null : Math.round(statistics.marketCapUsd),
  };
}

/** `value` to `decimals` places, without floating-point noise or a negative zero. */
function roundTo(value: number, decimals: number): number {
  return Number(value.toFixed(decimals)) + 0;
}
