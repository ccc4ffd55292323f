import { IsIn, IsInt, IsNumber, Max, Min } from 'class-validator';
import type { SettingsSection } from '../config/settings.js';
import type { PricingPolicy } from './aggregate.js';

/** The pricing policy and how often prices are aggregated. */
export interface PricingSettings extends PricingPolicy {
  /** Shortest time between two polls of one venue (a venue's own minimum may be longer). */
  readonly refreshMs: number;
}

const FINITE = { allowNaN: false, allowInfinity: false };

class PricingVariables {
  @IsInt()
  @Min(250)
  @Max(3_600_000)
  PRICE_REFRESH_MS = 1000;

  @IsInt()
  @Min(1000)
  @Max(86_400_000)
  PRICE_STALE_MS = 60_000;

  @IsInt()
  @Min(1)
  @Max(100)
  PRICE_MIN_SOURCES = 2;

  @IsNumber(FINITE)
  @Min(0.0001)
  @Max(0.5)
  PRICE_MAX_DEVIATION = 0.02;

  @IsNumber(FINITE)
  @Min(0)
  @Max(0.5)
  PRICE_OUTLIER_FLOOR = 0.005;

  @IsNumber(FINITE)
  @Min(1)
  @Max(50)
  PRICE_MAD_MULTIPLIER = 5;

  @IsIn(['true', 'false'])
  PRICE_VOLUME_WEIGHTED: 'true' | 'false' = 'false';
}

export const PRICING_SETTINGS: SettingsSection<PricingVariables, PricingSettings> = {
  token: Symbol('PricingSettings'),
  variables: PricingVariables,
  build: (variables, { problems }) => {
    if (variables.PRICE_OUTLIER_FLOOR > variables.PRICE_MAX_DEVIATION) {
      problems.push('PRICE_OUTLIER_FLOOR must not exceed PRICE_MAX_DEVIATION');
    }
    if (variables.PRICE_STALE_MS <= variables.PRICE_REFRESH_MS) {
      problems.push('PRICE_STALE_MS must be greater than PRICE_REFRESH_MS');
    }
    return {
      refreshMs: variables.PRICE_REFRESH_MS,
      staleMs: variables.PRICE_STALE_MS,
      minSources: variables.PRICE_MIN_SOURCES,
      maxDeviation: variables.PRICE_MAX_DEVIATION,
      outlierFloor: variables.PRICE_OUTLIER_FLOOR,
      madMultiplier: variables.PRICE_MAD_MULTIPLIER,
      volumeWeighted: variables.PRICE_VOLUME_WEIGHTED === 'true',
    };
  },
};

/** The default quorum, for tools that size a local setup before any configuration is read. */
export const DEFAULT_MIN_SOURCES = new PricingVariables().PRICE_MIN_SOURCES;
