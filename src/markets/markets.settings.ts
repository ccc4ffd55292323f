import { IsInt, IsOptional, IsString, IsUrl, Max, Min, isURL } from 'class-validator';
import { getAddress, isAddress, type Address } from 'viem';
import { SYMBOL_PATTERN } from '../common/symbol-format.js';
import { URL_OPTIONS, splitList, type SettingsSection } from '../config/settings.js';
import { BASE_CHAINLINK_UPDATE_RULES, BASE_CHAINLINK_USD_FEEDS } from './chainlink-feeds.js';
import type { ChainlinkConfig } from './chainlink.source.js';
import type { UpdateRule } from './price-source.js';
import { BUILT_IN_VENUE_IDS, STREAMING_VENUE_IDS } from './venues.js';

/** Which venues are asked, where, and how their streams are watched. */
export interface MarketsSettings {
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
}

class MarketsVariables {
  @IsOptional()
  @IsString()
  MARKETS?: string;

  @IsInt()
  @Min(100)
  @Max(60_000)
  MARKET_TIMEOUT_MS = 4000;

  @IsOptional()
  @IsString()
  MARKET_STREAMS?: string;

  @IsInt()
  @Min(200)
  @Max(300_000)
  MARKET_STREAM_QUIET_MS = 10_000;

  @IsOptional()
  @IsString()
  COINGECKO_API_KEY?: string;
}

export const MARKETS_SETTINGS: SettingsSection<MarketsVariables, MarketsSettings> = {
  token: Symbol('MarketsSettings'),
  variables: MarketsVariables,
  secrets: ['COINGECKO_API_KEY'],
  build: (variables, { env, problems }) => {
    const enabled = parseMarkets(variables.MARKETS, problems);
    const baseUrls = parseMarketUrls(env, problems);
    const streams = parseStreams(variables.MARKET_STREAMS, enabled, problems);
    const streamUrls = parseStreamUrls(env, problems);
    if (enabled === undefined) return undefined;
    const key = variables.COINGECKO_API_KEY;
    const apiKeys: Record<string, string> = key === undefined ? {} : { coingecko: key };
    return {
      enabled,
      baseUrls,
      timeoutMs: variables.MARKET_TIMEOUT_MS,
      apiKeys,
      streams,
      streamUrls,
      streamQuietMs: variables.MARKET_STREAM_QUIET_MS,
    };
  },
};

export function marketUrlVariable(id: string): string {
  return `MARKET_${id.toUpperCase()}_URL`;
}

export function streamUrlVariable(id: string): string {
  return `MARKET_${id.toUpperCase()}_STREAM_URL`;
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
  env: Readonly<Record<string, string | undefined>>,
  problems: string[],
): Record<string, string> {
  // never echoed: the URL may carry credentials
  return parseBaseUrls(env, BUILT_IN_VENUE_IDS, marketUrlVariable, URL_OPTIONS, (name) =>
    problems.push(`${name} must be an http(s) URL`),
  );
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

/** Reads MARKET_<ID>_STREAM_URL for every venue with a stream: a ws:// or wss:// base URL. */
function parseStreamUrls(
  env: Readonly<Record<string, string | undefined>>,
  problems: string[],
): Record<string, string> {
  const options = { ...URL_OPTIONS, protocols: ['ws', 'wss'] };
  return parseBaseUrls(env, STREAMING_VENUE_IDS, streamUrlVariable, options, (name, url) =>
    problems.push(`${name} must be a ws(s) URL (got "${url}")`),
  );
}

/** One base URL variable per venue id, set or not; each bad one reported through `refuse`. */
function parseBaseUrls(
  env: Readonly<Record<string, string | undefined>>,
  ids: readonly string[],
  variableOf: (id: string) => string,
  options: typeof URL_OPTIONS,
  refuse: (variable: string, url: string) => void,
): Record<string, string> {
  const urls: Record<string, string> = {};
  for (const id of ids) {
    const variable = variableOf(id);
    const url = env[variable]?.trim();
    if (url === undefined || url === '') continue;
    if (isURL(url, options)) urls[id] = url.replace(/\/+$/, '');
    else refuse(variable, url);
  }
  return urls;
}

class ChainlinkVariables {
  @IsOptional()
  @IsUrl(URL_OPTIONS)
  CHAINLINK_RPC_URL?: string;

  @IsOptional()
  @IsString()
  CHAINLINK_FEEDS?: string;
}

/** The on-chain Chainlink source, on only when CHAINLINK_RPC_URL is set; not one of MARKETS. */
export const CHAINLINK_SETTINGS: SettingsSection<ChainlinkVariables, ChainlinkConfig | undefined> =
  {
    token: Symbol('ChainlinkSettings'),
    variables: ChainlinkVariables,
    // RPC providers put the account's key in the URL path
    secrets: ['CHAINLINK_RPC_URL'],
    build: (variables, { problems }) => parseChainlink(variables, problems),
  };

/** CHAINLINK_RPC_URL switches the on-chain source on; CHAINLINK_FEEDS picks its feeds. */
function parseChainlink(
  variables: ChainlinkVariables,
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
