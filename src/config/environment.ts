import {
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
} from 'class-validator';

export const FACILITATOR_MODES = ['remote', 'cdp', 'embedded'] as const;
export type FacilitatorMode = (typeof FACILITATOR_MODES)[number];

export const URL_OPTIONS = {
  require_tld: false,
  require_protocol: true,
  protocols: ['http', 'https'],
};

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

const COMMA_LIST = /^\s*[^,\s]+(\s*,\s*[^,\s]+)*\s*$/;

/**
 * The process environment as the operator writes it. Every property is one variable; its
 * decorators are the validation rules and its initialiser the default.
 */
export class EnvironmentVariables {
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  @IsString()
  HOST = '0.0.0.0';

  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevelName = 'log';

  @IsInt()
  @Min(1000)
  @Max(300_000)
  HTTP_REQUEST_TIMEOUT_MS = 15_000;

  @IsInt()
  @Min(1000)
  @Max(600_000)
  HTTP_KEEP_ALIVE_TIMEOUT_MS = 5000;

  @IsInt()
  @Min(1)
  @Max(1_000_000)
  HTTP_MAX_CONNECTIONS = 1024;

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

  @IsOptional()
  @IsUrl(URL_OPTIONS)
  CHAINLINK_RPC_URL?: string;

  @IsOptional()
  @IsString()
  CHAINLINK_FEEDS?: string;

  @IsOptional()
  @Matches(COMMA_LIST, { message: 'ASSETS must be a comma-separated list of symbols' })
  ASSETS?: string;

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

  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.0001)
  @Max(0.5)
  PRICE_MAX_DEVIATION = 0.02;

  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(0.5)
  PRICE_OUTLIER_FLOOR = 0.005;

  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(1)
  @Max(50)
  PRICE_MAD_MULTIPLIER = 5;

  @IsIn(['true', 'false'])
  PRICE_VOLUME_WEIGHTED: 'true' | 'false' = 'false';

  @IsOptional()
  @IsString()
  X402_PAY_TO?: string;

  @IsString()
  X402_NETWORK = 'eip155:84532';

  @IsIn(FACILITATOR_MODES)
  X402_FACILITATOR: FacilitatorMode = 'remote';

  @IsUrl(URL_OPTIONS)
  X402_FACILITATOR_URL = 'https://x402.org/facilitator';

  @IsInt()
  @Min(500)
  @Max(120_000)
  X402_FACILITATOR_TIMEOUT_MS = 15_000;

  @IsOptional()
  @IsString()
  CDP_API_KEY_ID?: string;

  @IsOptional()
  @IsString()
  CDP_API_KEY_SECRET?: string;

  @IsOptional()
  @Matches(/^0x[0-9a-fA-F]{64}$/, {
    message: 'X402_SETTLER_PRIVATE_KEY must be 0x and 64 hex digits',
  })
  X402_SETTLER_PRIVATE_KEY?: string;

  @IsOptional()
  @IsUrl(URL_OPTIONS)
  X402_RPC_URL?: string;

  /** The longest wait between receipt asks; 0: a quarter of the chain's block time. */
  @IsInt()
  @Min(0)
  @Max(10_000)
  X402_RECEIPT_POLL_MS = 0;

  @IsInt()
  @Min(1000)
  @Max(300_000)
  X402_SETTLE_TIMEOUT_MS = 15_000;

  @IsInt()
  @Min(500)
  @Max(120_000)
  X402_VERIFY_TIMEOUT_MS = 10_000;

  @IsOptional()
  @IsString()
  X402_ASSET_ADDRESS?: string;

  @IsOptional()
  @IsString()
  X402_ASSET_NAME?: string;

  @IsOptional()
  @IsString()
  X402_ASSET_VERSION?: string;

  @IsInt()
  @Min(0)
  @Max(36)
  X402_ASSET_DECIMALS = 6;

  @IsOptional()
  @IsUrl(URL_OPTIONS)
  PUBLIC_URL?: string;

  @IsInt()
  @Min(10)
  @Max(3600)
  X402_MAX_TIMEOUT_SECONDS = 60;

  // Payment schemes (issue 13): what paid routes offer, and how batch settlement runs
  /** Comma list of `exact` and `batch-settlement`; every paid route offers each, same price. */
  @Matches(/^\s*(exact|batch-settlement)\s*(,\s*(exact|batch-settlement)\s*)*$/, {
    message: 'X402_SCHEMES must be a comma list of exact and batch-settlement',
  })
  X402_SCHEMES = 'exact,batch-settlement';

  /**
   * How often recorded vouchers are claimed on chain and the claims settled to X402_PAY_TO. At
   * most 10 min: a payer's timed withdrawal takes at least 15 min, so every voucher is claimed
   * before one can finalize.
   */
  @IsInt()
  @Min(1000)
  @Max(600_000)
  X402_BATCH_SETTLE_INTERVAL_MS = 60_000;

  /** Claim at once when a channel's unclaimed vouchers reach this many atomic units (0: off). */
  @IsInt()
  @Min(0)
  X402_BATCH_CLAIM_THRESHOLD = 1_000_000;

  /**
   * The channels' receiver authorizer (signs claims and refunds). Unset: the facilitator's
   * (embedded: the settlement key). Set the same key on every instance of one service.
   */
  @IsOptional()
  @Matches(/^0x[0-9a-fA-F]{64}$/, {
    message: 'X402_BATCH_AUTHORIZER_PRIVATE_KEY must be 0x and 64 hex digits',
  })
  X402_BATCH_AUTHORIZER_PRIVATE_KEY?: string;

  /** Where channel state lives without REDIS_URL (one JSON file per channel). */
  @IsString()
  X402_BATCH_DATA_DIR = 'data/batch-settlement';

  // Shared state (several instances behind a load balancer): see src/shared-state/
  @IsOptional()
  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;

  // Rate limits per client address (src/rate-limit/); 0 turns one off
  @IsInt()
  @Min(1000)
  @Max(3_600_000)
  RATE_LIMIT_WINDOW_MS = 60_000;

  @IsInt()
  @Min(0)
  @Max(1_000_000)
  RATE_LIMIT_FREE = 600;

  @IsInt()
  @Min(0)
  @Max(1_000_000)
  RATE_LIMIT_UNPAID = 120;

  /** Whose X-Forwarded-For gives the client address: `true` (any), or proxy addresses/CIDRs. */
  @IsOptional()
  @Matches(/^(true|false|[0-9a-fA-F.:/]+(\s*,\s*[0-9a-fA-F.:/]+)*)$/, {
    message: 'TRUST_PROXY must be true, false, or a comma list of proxy addresses or CIDRs',
  })
  TRUST_PROXY?: string;
}

/** Variables whose values are secrets: never echoed in errors or logs. */
export const SENSITIVE_VARIABLES: ReadonlySet<string> = new Set([
  'CDP_API_KEY_SECRET',
  'X402_SETTLER_PRIVATE_KEY',
  'X402_BATCH_AUTHORIZER_PRIVATE_KEY',
  'COINGECKO_API_KEY',
  // RPC providers put the account's key in the URL path
  'X402_RPC_URL',
  'CHAINLINK_RPC_URL',
  // a self-hosted facilitator's URL may carry credentials or a key in its path
  'X402_FACILITATOR_URL',
  // redis://user:password@host
  'REDIS_URL',
]);
