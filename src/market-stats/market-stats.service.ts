import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { PRICING_SETTINGS, type PricingSettings } from '../aggregation/pricing.settings.js';
import type { PriceSnapshot } from '../aggregation/price-snapshot.js';
import { MARKETS_SETTINGS, type MarketsSettings } from '../markets/markets.settings.js';
import { VenueConnection, venueEndpoint } from '../markets/venue-connection.js';
import { builtInVenue } from '../markets/venues.js';
import { figures24h, marketCapOf, type Figures24h, type FiguresContext } from './market-figures.js';
import { MARKET_STATS_SETTINGS, type MarketStatsSettings } from './market-stats.settings.js';
import { StatsPoller } from './stats-poller.js';
import { statsVenue } from './stats-venues.js';
import type { MarketStats, StatsVenue } from './venue-stats.js';

/** One symbol's 24-hour figures and market cap. */
export interface SymbolStatistics extends Figures24h {
  readonly marketCapUsd: number | null;
}

/**
 * Reads every enabled venue's 24-hour statistics, each on its own poller, and makes one
 * symbol's figures from the venues' latest readings on request.
 */
@Injectable()
export class MarketStatsService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly pollers: readonly { readonly venue: StatsVenue; readonly poller: StatsPoller }[];

  constructor(
    @Inject(MARKETS_SETTINGS.token) markets: MarketsSettings,
    @Inject(MARKET_STATS_SETTINGS.token) private readonly settings: MarketStatsSettings,
    @Inject(PRICING_SETTINGS.token) private readonly pricing: PricingSettings,
  ) {
    this.pollers = markets.enabled.flatMap((id) => {
      const venue = statsVenue(id);
      if (venue === undefined) return [];
      const definition = builtInVenue(id);
      const endpoint = venueEndpoint(markets.baseUrls[id] ?? definition.defaultBaseUrl);
      const apiKey = markets.apiKeys[id];
      const headers = {
        ...endpoint.headers,
        ...(definition.apiKeyHeader === undefined || apiKey === undefined
          ? {}
          : { [definition.apiKeyHeader]: apiKey }),
      };
      const connection = new VenueConnection(
        endpoint.baseUrl,
        markets.timeoutMs,
        Date.now,
        headers,
      );
      const intervalMs = Math.max(venue.minIntervalMs, settings.refreshMs);
      return [{ venue, poller: new StatsPoller(id, venue.create(connection), intervalMs) }];
    });
  }

  onApplicationBootstrap(): void {
    for (const { poller } of this.pollers) poller.start();
  }

  onApplicationShutdown(): void {
    for (const { poller } of this.pollers) poller.stop();
  }

  /** Reads every venue now (joining reads in flight); for tests and the sandbox. */
  async refresh(): Promise<void> {
    await Promise.all(this.pollers.map(({ poller }) => poller.poll()));
  }

  /** Whether any venue has a current reading: without one, no figure can be made. */
  gathered(now = Date.now()): boolean {
    return this.pollers.some(({ poller }) => {
      const reading = poller.latest;
      return reading !== undefined && now - reading.at <= this.settings.staleMs;
    });
  }

  /**
   * `symbol`'s figures from every venue's latest reading, its stablecoin markets converted at
   * the rates of `snapshot` (the one its price is served from), its market cap checked against
   * `price`.
   */
  statisticsOf(symbol: string, price: number, snapshot: PriceSnapshot): SymbolStatistics {
    const context: FiguresContext = {
      policy: this.pricing,
      rates: {
        USDT: snapshot.prices.get('USDT')?.price,
        USDC: snapshot.prices.get('USDC')?.price,
      },
      staleMs: this.settings.staleMs,
      now: Date.now(),
    };
    const trading = new Map<string, readonly MarketStats[]>();
    const caps: MarketStats[] = [];
    for (const { venue, poller } of this.pollers) {
      const own = poller.latest?.bySymbol.get(symbol);
      if (own === undefined) continue;
      if (venue.marketCapOnly === true) caps.push(...own);
      else trading.set(venue.id, own);
    }
    return {
      ...figures24h(symbol, trading, context),
      marketCapUsd: marketCapOf(caps, price, context),
    };
  }
}
