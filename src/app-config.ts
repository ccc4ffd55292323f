import { PRICING_SETTINGS } from './aggregation/pricing.settings.js';
import { ATTESTATION_SETTINGS } from './attestation/attestation.settings.js';
import { ASSETS_SETTINGS } from './assets/assets.settings.js';
import { HTTP_SETTINGS, LOG_LEVEL_SETTINGS } from './common/server.settings.js';
import { ConfigError, collectSettings, type SettingsOf } from './config/settings.js';
import { HISTORY_SETTINGS } from './history/history.settings.js';
import { LOG_FORMAT_SETTINGS } from './logging/logging.settings.js';
import { MARKET_STATS_SETTINGS } from './market-stats/market-stats.settings.js';
import { CHAINLINK_SETTINGS, MARKETS_SETTINGS } from './markets/markets.settings.js';
import { MCP_SETTINGS } from './mcp/mcp.settings.js';
import { METRICS_TOKEN_SETTINGS } from './metrics/metrics.settings.js';
import {
  BATCH_SETTLEMENT_SETTINGS,
  EXACT_SVM_SETTINGS,
  PAYMENT_SETTINGS,
} from './payments/index.js';
import { RATE_LIMIT_SETTINGS } from './rate-limit/rate-limit.settings.js';
import { SHARED_STATE_SETTINGS } from './shared-state/shared-state.settings.js';
import { STREAMS_SETTINGS, streamsWithinConnections } from './streams/streams.settings.js';

/**
 * Every feature's settings section, by the key the app's configuration carries it under. A
 * feature declares its variables next to its code; this list is the only place they meet.
 */
export const SETTINGS_SECTIONS = {
  http: HTTP_SETTINGS,
  logLevel: LOG_LEVEL_SETTINGS,
  logFormat: LOG_FORMAT_SETTINGS,
  metricsToken: METRICS_TOKEN_SETTINGS,
  markets: MARKETS_SETTINGS,
  chainlink: CHAINLINK_SETTINGS,
  marketStats: MARKET_STATS_SETTINGS,
  history: HISTORY_SETTINGS,
  assets: ASSETS_SETTINGS,
  pricing: PRICING_SETTINGS,
  payments: PAYMENT_SETTINGS,
  batchSettlement: BATCH_SETTLEMENT_SETTINGS,
  exactSvm: EXACT_SVM_SETTINGS,
  attestation: ATTESTATION_SETTINGS,
  sharedState: SHARED_STATE_SETTINGS,
  rateLimits: RATE_LIMIT_SETTINGS,
  mcp: MCP_SETTINGS,
  streams: STREAMS_SETTINGS,
};

type Sections = typeof SETTINGS_SECTIONS;

/** The whole configuration, one entry per feature; built once from the environment. */
export type AppConfig = { readonly [K in keyof Sections]: SettingsOf<Sections[K]> };

/** Builds and validates the configuration; throws one ConfigError naming every bad variable. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): AppConfig {
  const { settings, problems } = collectSettings(env, SETTINGS_SECTIONS);
  const { markets, pricing } = settings;
  if (
    markets !== undefined &&
    pricing !== undefined &&
    pricing.minSources > markets.enabled.length
  ) {
    problems.push(
      `PRICE_MIN_SOURCES (${pricing.minSources}) cannot exceed the number of enabled MARKETS (${markets.enabled.length})`,
    );
  }
  const { http } = settings;
  const streams =
    settings.streams === undefined || http === undefined
      ? settings.streams
      : streamsWithinConnections(settings.streams, http.maxConnections, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  const { payments, exactSvm } = settings as AppConfig;
  // the networks and the facilitators read Solana from the payments, naming no scheme
  return {
    ...(settings as AppConfig),
    // defined: a section without settings recorded a problem, thrown above
    streams: streams as AppConfig['streams'],
    payments: exactSvm === undefined ? payments : { ...payments, solana: exactSvm },
  };
}
