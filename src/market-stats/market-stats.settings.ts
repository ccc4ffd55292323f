import { IsInt, Max, Min } from 'class-validator';
import type { SettingsSection } from '../config/settings.js';

/** How often each venue's 24-hour statistics are read, and how long a reading counts. */
export interface MarketStatsSettings {
  /** Shortest time between two reads of one venue's statistics (a venue's own minimum may be longer). */
  readonly refreshMs: number;
  /** A venue's statistics read longer ago than this are left out. */
  readonly staleMs: number;
}

class MarketStatsVariables {
  @IsInt()
  @Min(1000)
  @Max(3_600_000)
  MARKET_STATS_REFRESH_MS = 30_000;

  @IsInt()
  @Min(2000)
  @Max(86_400_000)
  MARKET_STATS_STALE_MS = 300_000;
}

export const MARKET_STATS_SETTINGS: SettingsSection<MarketStatsVariables, MarketStatsSettings> = {
  token: Symbol('MarketStatsSettings'),
  variables: MarketStatsVariables,
  build: (variables, { problems }) => {
    if (variables.MARKET_STATS_STALE_MS <= variables.MARKET_STATS_REFRESH_MS) {
      problems.push('MARKET_STATS_STALE_MS must be greater than MARKET_STATS_REFRESH_MS');
      return undefined;
    }
    return {
      refreshMs: variables.MARKET_STATS_REFRESH_MS,
      staleMs: variables.MARKET_STATS_STALE_MS,
    };
  },
};
