import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { PriceRefreshService } from '../aggregation/price-refresh.service.js';
import { PRICING_SETTINGS, type PricingSettings } from '../aggregation/pricing.settings.js';
import type { PriceSnapshot } from '../aggregation/price-snapshot.js';
import { MARKETS_SETTINGS, type MarketsSettings } from '../markets/markets.settings.js';
import { VenueConnection, venueEndpoint } from '../markets/venue-connection.js';
import { builtInVenue } from '../markets/venues.js';
import { figures24h, marketCapOf, type Figures24h, type FiguresContext } from './market-figures.js';
import { MARKET_STATS_SETTINGS, type MarketStatsSettings } from './market-stats.settings.js';
import { remoteText } from '../common/remote-text.js';
import { REDIS_CLIENT, type RedisClient } from '../shared-state/redis-connection.js';
import { SharedStatsReadings } from './shared-stats.js';
import { StatsPoller, type StatsReading } from './stats-poller.js';
import { statsVenue } from './stats-venues.js';
import type { MarketStats, StatsVenue } from './venue-stats.js';

/** One symbol's 24-hour figures and market cap. */
export interface SymbolStatistics extends Figures24h {
  readonly marketCapUsd: number | null;
}

/** How often an instance that does not poll the venues reads the poller's published readings. */
const SHARED_SYNC_MS = 1000;

/**
 * Reads every enabled venue's 24-hour statistics, each on its own poller, and makes one
 * symbol's figures from the venues' latest readings on request. With several instances
 * (REDIS_URL), only the one elected to poll the prices reads the venues and publishes each
 * reading; the others serve the published ones.
 */
@Injectable()
export class MarketStatsService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MarketStatsService.name);
  private readonly pollers: readonly { readonly venue: StatsVenue; readonly poller: StatsPoller }[];
  private readonly shared: SharedStatsReadings | undefined;
  /** The poller's published readings, as last read (instances that do not poll). */
  private published = new Map<string, StatsReading>();
  private syncTimer: NodeJS.Timeout | undefined;
  private publishFailing = false;
  /** Counts the readings taken in (own or published): the figures below are made once per count. */
  private readings = 0;
  /** Each symbol's 24-hour figures, while no reading, stablecoin rate or staleness changes them. */
  private readonly figures = new Map<string, CachedFigures>();

  constructor(
    @Inject(MARKETS_SETTINGS.token) markets: MarketsSettings,
    @Inject(MARKET_STATS_SETTINGS.token) private readonly settings: MarketStatsSettings,
    @Inject(PRICING_SETTINGS.token) private readonly pricing: PricingSettings,
    private readonly prices: PriceRefreshService,
    @Inject(REDIS_CLIENT) redis: RedisClient | null,
  ) {
    this.shared = redis === null ? undefined : new SharedStatsReadings(redis, settings.staleMs);
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
      const poller = new StatsPoller(
        id,
        venue.create(connection),
        intervalMs,
        (reading) => {
          this.readings += 1;
          this.publish(id, reading);
        },
        () => this.reading,
      );
      return [{ venue, poller }];
    });
  }

  /** Whether this instance reads the venues: alone, or elected to poll the prices. */
  private get reading(): boolean {
    return this.shared === undefined || this.prices.polling;
  }

  onApplicationBootstrap(): void {
    for (const { poller } of this.pollers) poller.start();
    if (this.shared !== undefined) this.syncPublished();
  }

  onApplicationShutdown(): void {
    for (const { poller } of this.pollers) poller.stop();
    clearTimeout(this.syncTimer);
    this.syncTimer = undefined;
  }

  /** Reads every venue now (joining reads in flight) if this instance reads them; for tests. */
  async refresh(): Promise<void> {
    if (this.reading) await Promise.all(this.pollers.map(({ poller }) => poller.poll()));
    if (this.shared !== undefined) await this.readPublished();
  }

  /**
   * Whether any trading venue has a current reading: without one, no 24-hour figure can be
   * made (a market-cap source alone makes none).
   */
  gathered(now = Date.now()): boolean {
    return this.pollers.some(({ venue }) => {
      if (venue.marketCapOnly === true) return false;
      const reading = this.latestOf(venue.id);
      return reading !== undefined && now - reading.at <= this.settings.staleMs;
    });
  }

  /** A venue's newest reading: this instance's own, or the poller's published one. */
  private latestOf(id: string): StatsReading | undefined {
    const own = this.pollers.find(({ venue }) => venue.id === id)?.poller.latest;
    const published = this.published.get(id);
    if (own === undefined || published === undefined) return own ?? published;
    return own.at >= published.at ? own : published;
  }

  private publish(id: string, reading: StatsReading): void {
    this.shared?.publish(id, reading).then(
      () => {
        this.publishFailing = false;
      },
      (error: unknown) => {
        if (!this.publishFailing) {
          this.logger.warn(`24 h statistics not published: ${remoteText(error)}`);
        }
        this.publishFailing = true;
      },
    );
  }

  /** Every second while the app runs: the poller's published readings, when another polls. */
  private syncPublished(): void {
    const next = (): void => {
      this.syncTimer = setTimeout(() => {
        this.syncPublished();
      }, SHARED_SYNC_MS);
      this.syncTimer.unref();
    };
    if (this.prices.polling) {
      next();
      return;
    }
    // an unreachable Redis keeps the last readings until they go stale, as /v1/sources does
    this.readPublished().then(next, next);
  }

  private async readPublished(): Promise<void> {
    if (this.shared === undefined) return;
    const published = await this.shared.current(this.pollers.map(({ venue }) => venue.id));
    const changed =
      published.size !== this.published.size ||
      [...published].some(([id, reading]) => this.published.get(id)?.at !== reading.at);
    this.published = published;
    if (changed) this.readings += 1;
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
    const caps: MarketStats[] = [];
    for (const { venue } of this.pollers) {
      if (venue.marketCapOnly !== true) continue;
      caps.push(...(this.latestOf(venue.id)?.bySymbol.get(symbol) ?? []));
    }
    return {
      ...this.tradingFigures(symbol, context),
      marketCapUsd: marketCapOf(caps, price, context),
    };
  }

  /**
   * The venues' figures for `symbol`, made again only when a reading arrives, a stablecoin rate
   * moves, or one of the readings they were made from goes stale.
   */
  private tradingFigures(symbol: string, context: FiguresContext): Figures24h {
    const cached = this.figures.get(symbol);
    if (
      cached !== undefined &&
      cached.readings === this.readings &&
      cached.usdt === context.rates.USDT &&
      cached.usdc === context.rates.USDC &&
      context.now < cached.until
    ) {
      return cached.figures;
    }
    const trading = new Map<string, readonly MarketStats[]>();
    let until = Number.POSITIVE_INFINITY;
    for (const { venue } of this.pollers) {
      const own = this.latestOf(venue.id)?.bySymbol.get(symbol);
      if (own === undefined || venue.marketCapOnly === true) continue;
      trading.set(venue.id, own);
      for (const stats of own) {
        const staleAt = stats.observedAt + context.staleMs + 1;
        if (staleAt > context.now) until = Math.min(until, staleAt);
      }
    }
    const figures = figures24h(symbol, trading, context);
    this.figures.set(symbol, {
      readings: this.readings,
      usdt: context.rates.USDT,
      usdc: context.rates.USDC,
      until,
      figures,
    });
    return figures;
  }
}

interface CachedFigures {
  readonly readings: number;
  readonly usdt: number | undefined;
  readonly usdc: number | undefined;
  /** When the first reading they were made from goes stale. */
  readonly until: number;
  readonly figures: Figures24h;
}
