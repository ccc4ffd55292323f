import { isURL, validateSync } from 'class-validator';
import { SYMBOL_PATTERN } from '../assets/symbol-format.js';
import { getAddress, isAddress, type Address } from 'viem';
import {
  BASE_CHAINLINK_UPDATE_RULES,
  BASE_CHAINLINK_USD_FEEDS,
} from '../markets/chainlink-feeds.js';
import type { ChainlinkConfig } from '../markets/chainlink.source.js';
import type { UpdateRule } from '../markets/price-source.js';
import { BUILT_IN_VENUE_IDS, STREAMING_VENUE_IDS } from '../markets/venues.js';
import {
  EnvironmentVariables,
  SENSITIVE_VARIABLES,
  URL_OPTIONS,
  type LogFormat,
  type LogLevelName,
} from './environment.js';
import { parsePaymentConfig, type PaymentConfig } from './payment-config.js';

/** The typed configuration every other module reads; built once from the environment. */
export interface AppConfig {
  readonly http: HttpConfig;
  readonly logLevel: LogLevelName;
  readonly logFormat: LogFormat;
  /** GET /metrics requires this bearer token when set. */
  readonly metricsToken: string | undefined;
  readonly markets: {
    readonly enabled: readonly string[];
    readonly baseUrls: Readonly<Record<string, string>>;
    readonly timeoutMs: number;
    /** API keys by venue id (COINGECKO_API_KEY), sent in the venue's own header. */
    readonly apiKeys: Readonly<Record<string, string>>;
    /** Enabled venues whose ticker stream is used (MARKET_STREAMS), REST polling as fallback. */
    readonly streams: readonly string[];
    /** MARKET_<ID>_STREAM_URL: a ws(s) base URL replacing the stream's scheme and host. */
    readonly streamUrls: Readonly<Record<string, string>>;
    /** A stream without a readable message for this long is stale and reconnected. */
    readonly streamQuietMs: number;
  };
  /** The on-chain Chainlink source, on only when CHAINLINK_RPC_URL is set; not one of MARKETS. */
  readonly chainlink: ChainlinkConfig | undefined;
  /** Symbols to sell instead of the default catalogue; undefined means the default. */
  readonly assets: readonly string[] | undefined;
  readonly pricing: {
    readonly refreshMs: number;
    readonly staleMs: number;
    readonly minSources: number;
    readonly maxDeviation: number;
    readonly outlierFloor: number;
    readonly madMultiplier: number;
    readonly volumeWeighted: boolean;
  };
  readonly payments: PaymentConfig;
}

/** The listening socket and the limits that keep slow or idle clients from holding it. */
export interface HttpConfig {
  readonly port: number;
  readonly host: string;
  /** Time to receive a whole request, headers and body. */
  readonly requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  readonly keepAliveTimeoutMs: number;
  /** Connections beyond this many are closed on arrival. */
  readonly maxConnections: number;
}

export const APP_CONFIG = Symbol('AppConfig');

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)$/;

/** Builds and validates the configuration; throws a ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined>): AppConfig {
  const problems: string[] = [];
  const variables = readEnvironment(env, problems);
  problems.push(
    ...validateSync(variables).flatMap((error) =>
      Object.values(error.constraints ?? {}).map((message) =>
        SENSITIVE_VARIABLES.has(error.property)
          ? message
          : `${message} (got "${String(error.value)}")`,
      ),
    ),
  );
  const markets = parseMarkets(variables.MARKETS, problems);
  const baseUrls = parseMarketUrls(env, problems);
  const streams = parseStreams(variables.MARKET_STREAMS, markets, problems);
  const streamUrls = parseStreamUrls(env, problems);
  const assets =
    variables.ASSETS === undefined ? undefined : parseAssets(variables.ASSETS, problems);
  if (variables.PRICE_OUTLIER_FLOOR > variables.PRICE_MAX_DEVIATION) {
    problems.push('PRICE_OUTLIER_FLOOR must not exceed PRICE_MAX_DEVIATION');
  }
  if (variables.PRICE_STALE_MS <= variables.PRICE_REFRESH_MS) {
    problems.push('PRICE_STALE_MS must be greater than PRICE_REFRESH_MS');
  }
  if (markets !== undefined && variables.PRICE_MIN_SOURCES > markets.length) {
    problems.push(
      `PRICE_MIN_SOURCES (${variables.PRICE_MIN_SOURCES}) cannot exceed the number of enabled MARKETS (${markets.length})`,
    );
  }
  const chainlink = parseChainlink(variables, problems);
  const payments = parsePaymentConfig(variables, problems);
  if (problems.length > 0 || markets === undefined || payments === undefined) {
    throw new ConfigError(problems);
  }

  return {
    http: {
      port: variables.PORT,
      host: variables.HOST,
      requestTimeoutMs: variables.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: variables.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: variables.HTTP_MAX_CONNECTIONS,
    },
    logLevel: variables.LOG_LEVEL,
    logFormat: variables.LOG_FORMAT,
    metricsToken: variables.METRICS_TOKEN,
    markets: {
      enabled: markets,
      baseUrls,
      timeoutMs: variables.MARKET_TIMEOUT_MS,
      apiKeys: marketApiKeys(variables),
      streams,
      streamUrls,
      streamQuietMs: variables.MARKET_STREAM_QUIET_MS,
    },
    chainlink,
    assets,
    pricing: {
      refreshMs: variables.PRICE_REFRESH_MS,
      staleMs: variables.PRICE_STALE_MS,
      minSources: variables.PRICE_MIN_SOURCES,
      maxDeviation: variables.PRICE_MAX_DEVIATION,
      outlierFloor: variables.PRICE_OUTLIER_FLOOR,
      madMultiplier: variables.PRICE_MAD_MULTIPLIER,
      volumeWeighted: variables.PRICE_VOLUME_WEIGHTED === 'true',
    },
    payments,
  };
}

/** Copies set variables onto the defaults, turning numeric ones into numbers. */
function readEnvironment(
  env: Record<string, string | undefined>,
  problems: string[],
): EnvironmentVariables {
  const variables = new EnvironmentVariables();
  const target = variables as unknown as Record<string, unknown>;
  for (const key of environmentKeys()) {
    const raw = env[key]?.trim();
    if (raw === undefined || raw === '') continue;
    const fallback = target[key];
    if (typeof fallback === 'number') {
      const integer = Number.isInteger(fallback);
      if ((integer ? INTEGER : DECIMAL).test(raw)) target[key] = Number(raw);
      else
        problems.push(
          `${key} must be ${integer ? 'an integer' : 'a decimal number'} (got "${raw}")`,
        );
    } else {
      target[key] = raw;
    }
  }
  return variables;
}

function environmentKeys(): string[] {
  return [
    ...new Set([...Object.keys(new EnvironmentVariables()), 'MARKETS', 'MARKET_STREAMS', 'ASSETS']),
  ];
}

export function marketUrlVariable(id: string): string {
  return `MARKET_${id.toUpperCase()}_URL`;
}

/** The enabled venues, or undefined (with the problem recorded) when MARKETS is wrong. */
function parseMarkets(value: string | undefined, problems: string[]): string[] | undefined {
  if (value === undefined) return [...BUILT_IN_VENUE_IDS];
  const ids = splitList(value).map((id) => id.toLowerCase());
  const unknown = ids.filter((id) => !BUILT_IN_VENUE_IDS.includes(id));
  if (unknown.length > 0) {
    const names = unknown.map((id) => (id === '' ? '(empty)' : id)).join(', ');
    problems.push(
      `MARKETS names unknown venue(s) ${names}; known: ${BUILT_IN_VENUE_IDS.join(', ')}`,
    );
    return undefined;
  }
  if (new Set(ids).size !== ids.length) {
    problems.push('MARKETS lists a venue twice');
    return undefined;
  }
  return ids;
}

/** Reads MARKET_<ID>_URL for every built-in venue: a base URL replacing the venue's scheme and host. */
function parseMarketUrls(
  env: Record<string, string | undefined>,
  problems: string[],
): Record<string, string> {
  const urls: Record<string, string> = {};
  for (const id of BUILT_IN_VENUE_IDS) {
    const variable = marketUrlVariable(id);
    const url = env[variable]?.trim();
    if (url === undefined || url === '') continue;
    if (isURL(url, URL_OPTIONS)) urls[id] = url.replace(/\/+$/, '');
    // not echoed: the URL may carry credentials
    else problems.push(`${variable} must be an http(s) URL`);
  }
  return urls;
}

/** MARKET_STREAMS: `none`, or enabled venues that have a stream; by default all of those. */
function parseStreams(
  value: string | undefined,
  markets: readonly string[] | undefined,
  problems: string[],
): string[] {
  const enabled = markets ?? [];
  if (value === undefined) return STREAMING_VENUE_IDS.filter((id) => enabled.includes(id));
  if (value.toLowerCase() === 'none') return [];
  const ids = splitList(value).map((id) => id.toLowerCase());
  const refused = ids.filter((id) => !STREAMING_VENUE_IDS.includes(id) || !enabled.includes(id));
  if (refused.length > 0) {
    problems.push(
      `MARKET_STREAMS names ${refused.map((id) => (id === '' ? '(empty)' : id)).join(', ')}: only enabled venues with a stream (${STREAMING_VENUE_IDS.join(', ')}) or "none"`,
    );
  }
  if (new Set(ids).size !== ids.length) problems.push('MARKET_STREAMS lists a venue twice');
  return ids;
}

export function streamUrlVariable(id: string): string {
  return `MARKET_${id.toUpperCase()}_STREAM_URL`;
}

/** Reads MARKET_<ID>_STREAM_URL for every venue with a stream: a ws:// or wss:// base URL. */
function parseStreamUrls(
  env: Record<string, string | undefined>,
  problems: string[],
): Record<string, string> {
  const urls: Record<string, string> = {};
  for (const id of STREAMING_VENUE_IDS) {
    const variable = streamUrlVariable(id);
    const url = env[variable]?.trim();
    if (url === undefined || url === '') continue;
    if (isURL(url, { ...URL_OPTIONS, protocols: ['ws', 'wss'] }))
      urls[id] = url.replace(/\/+$/, '');
    else problems.push(`${variable} must be a ws(s) URL (got "${url}")`);
  }
  return urls;
}

function parseAssets(value: string, problems: string[]): string[] {
  const symbols = splitList(value).map((symbol) => symbol.toUpperCase());
  const malformed = symbols.filter((symbol) => !SYMBOL_PATTERN.test(symbol));
  if (malformed.length > 0) {
    problems.push(`ASSETS has malformed symbol(s) ${malformed.join(', ')}; use letters and digits`);
  }
  if (new Set(symbols).size !== symbols.length) problems.push('ASSETS lists a symbol twice');
  return symbols;
}

function splitList(value: string): string[] {
  return value.split(',').map((item) => item.trim());
}

function marketApiKeys(variables: EnvironmentVariables): Record<string, string> {
  const key = variables.COINGECKO_API_KEY;
  return key === undefined ? {} : { coingecko: key };
}

/** CHAINLINK_RPC_URL switches the on-chain source on; CHAINLINK_FEEDS picks its feeds. */
function parseChainlink(
  variables: EnvironmentVariables,
  problems: string[],
): ChainlinkConfig | undefined {
  const { CHAINLINK_RPC_URL: rpcUrl, CHAINLINK_FEEDS: list } = variables;
  if (rpcUrl === undefined) {
    if (list !== undefined) problems.push('CHAINLINK_FEEDS is set but CHAINLINK_RPC_URL is not');
    return undefined;
  }
  if (list === undefined) {
    return { rpcUrl, feeds: BASE_CHAINLINK_USD_FEEDS, updateRules: BASE_CHAINLINK_UPDATE_RULES };
  }
  return { rpcUrl, ...parseChainlinkFeeds(list, problems) };
}

const HEARTBEAT_SECONDS = /^[1-9]\d{0,5}$/;
const DEVIATION_PERCENT = /^\d{1,2}(\.\d{1,4})?$/;

/**
 * `SYM=0xaddress[:heartbeatSeconds:deviationPercent],...`: a mixed-case address must carry a
 * valid EIP-55 checksum; the optional heartbeat and deviation threshold give the feed's own
 * staleness rule (without them its answers count only while younger than PRICE_STALE_MS).
 */
function parseChainlinkFeeds(
  list: string,
  problems: string[],
): Pick<ChainlinkConfig, 'feeds' | 'updateRules'> {
  const feeds: Record<string, Address> = {};
  const updateRules: Record<string, UpdateRule> = {};
  for (const item of splitList(list)) {
    const [symbol = '', target = '', ...rest] = item.split('=').map((part) => part.trim());
    const [address = '', heartbeat, deviation, ...extra] = target.split(':');
    const upper = symbol.toUpperCase();
    const ruleOk =
      (heartbeat === undefined && deviation === undefined) ||
      (heartbeat !== undefined &&
        deviation !== undefined &&
        HEARTBEAT_SECONDS.test(heartbeat) &&
        DEVIATION_PERCENT.test(deviation) &&
        Number(deviation) > 0);
    if (
      !SYMBOL_PATTERN.test(upper) ||
      rest.length > 0 ||
      extra.length > 0 ||
      !isAddress(address) ||
      !ruleOk
    ) {
      problems.push(
        `CHAINLINK_FEEDS item "${item}" must be SYMBOL=0x-address (EIP-55 if mixed case), optionally followed by :heartbeatSeconds:deviationPercent`,
      );
    } else if (upper in feeds) {
      problems.push(`CHAINLINK_FEEDS lists ${upper} twice`);
    } else {
      feeds[upper] = getAddress(address);
      if (heartbeat !== undefined && deviation !== undefined) {
        updateRules[upper] = {
          heartbeatMs: Number(heartbeat) * 1000,
          deviation: Number(deviation) / 100,
        };
      }
    }
  }
  return { feeds, updateRules };
}
