import { IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min } from 'class-validator';
import { getAddress, isAddress } from 'viem';
import { URL_OPTIONS, type SettingsSection } from '../config/settings.js';
import { knownNetwork, resolveNetwork, type PaymentAsset } from './networks.js';

export const FACILITATOR_MODES = ['remote', 'cdp', 'embedded'] as const;
export type FacilitatorMode = (typeof FACILITATOR_MODES)[number];

export type FacilitatorConfig =
  | { readonly mode: 'remote'; readonly url: string; readonly timeoutMs: number }
  | {
      readonly mode: 'cdp';
      readonly apiKeyId: string;
      readonly apiKeySecret: string;
      readonly timeoutMs: number;
    }
  | {
      readonly mode: 'embedded';
      readonly settlerPrivateKey: `0x${string}`;
      readonly rpcUrl: string;
      /** Longest wait between receipt asks; undefined: a quarter of the chain's block time. */
      readonly receiptMaxWaitMs: number | undefined;
      readonly receiptTimeoutMs: number;
    };

/** How the service is paid: who receives, on which network, in which token, through whom. */
export interface PaymentConfig {
  readonly payTo: `0x${string}`;
  readonly network: `eip155:${number}`;
  readonly asset: PaymentAsset;
  readonly facilitator: FacilitatorConfig;
  /** Public base URL for the `resource` of payment requirements (behind a proxy). */
  readonly publicUrl: string | undefined;
  readonly maxTimeoutSeconds: number;
  /** Bounds the whole settlement (broadcast + receipt); past it the outcome is unknown. */
  readonly settleTimeoutMs: number;
  readonly verifyTimeoutMs: number;
  /**
   * The chain the seller reads to prove and reconcile settlements: the embedded facilitator's
   * RPC, or X402_RPC_URL beside a remote/CDP facilitator (unset: that facilitator is trusted).
   */
  readonly rpcUrl: string | undefined;
  /** The x402 schemes every paid route offers, in this order (X402_SCHEMES). */
  readonly schemes: readonly PaymentScheme[];
  readonly batch: BatchSettlementConfig;
}

/** An x402 scheme id, as X402_SCHEMES lists it (`exact`, `batch-settlement`). */
export type PaymentScheme = string;
const BATCH: PaymentScheme = 'batch-settlement';

/** Batch settlement: vouchers recorded locally, claimed and settled on chain later. */
export interface BatchSettlementConfig {
  /** Claim + settle period (X402_BATCH_SETTLE_INTERVAL_MS). */
  readonly settleIntervalMs: number;
  /** Unclaimed atomic units on one channel that trigger a claim before the period ends; 0: off. */
  readonly claimThreshold: bigint;
  /** Channel state directory without REDIS_URL (X402_BATCH_DATA_DIR). */
  readonly dataDir: string;
  /** The receiver authorizer's key (secret); undefined: the facilitator's authorizer. */
  readonly authorizerPrivateKey: `0x${string}` | undefined;
}

class PaymentVariables {
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

  /**
   * Comma list of registered schemes (`exact`, `batch-settlement`, or one an extending module
   * registers); every paid route offers each, same price. A name no scheme implements stops
   * start-up (SchemeRegistry). Unset: both with the embedded facilitator, `exact` alone with a
   * remote or CDP one (a facilitator that cannot do batch-settlement fails start-up when it is
   * asked for).
   */
  @IsOptional()
  @Matches(/^\s*[a-z0-9][a-z0-9-]*\s*(,\s*[a-z0-9][a-z0-9-]*\s*)*$/, {
    message: 'X402_SCHEMES must be a comma list of scheme names, such as exact,batch-settlement',
  })
  X402_SCHEMES?: string;

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
}

export const PAYMENT_SETTINGS: SettingsSection<PaymentVariables, PaymentConfig> = {
  token: Symbol('PaymentSettings'),
  variables: PaymentVariables,
  secrets: [
    'CDP_API_KEY_SECRET',
    'X402_SETTLER_PRIVATE_KEY',
    'X402_BATCH_AUTHORIZER_PRIVATE_KEY',
    // RPC providers put the account's key in the URL path
    'X402_RPC_URL',
    // a self-hosted facilitator's URL may carry credentials or a key in its path
    'X402_FACILITATOR_URL',
  ],
  build: (variables, { problems }) => parsePaymentConfig(variables, problems),
};

/** Reads the X402_* variables; records a problem (never a secret's value) for each bad one. */
function parsePaymentConfig(
  variables: PaymentVariables,
  problems: string[],
): PaymentConfig | undefined {
  const before = problems.length;
  const payTo = parseAddress('X402_PAY_TO', variables.X402_PAY_TO, problems, true);
  const network = resolveNetwork(variables.X402_NETWORK);
  if (network === undefined) {
    problems.push(
      `X402_NETWORK must be base, base-sepolia or a CAIP-2 id such as eip155:84532 (got "${variables.X402_NETWORK}")`,
    );
  }
  const asset = network === undefined ? undefined : parseAsset(variables, network, problems);
  const facilitator = parseFacilitator(variables, problems);
  if (problems.length > before || payTo === undefined || network === undefined) return undefined;
  if (asset === undefined || facilitator === undefined) return undefined;
  return {
    payTo,
    network,
    asset,
    facilitator,
    publicUrl: variables.PUBLIC_URL?.replace(/\/+$/, ''),
    maxTimeoutSeconds: variables.X402_MAX_TIMEOUT_SECONDS,
    settleTimeoutMs: variables.X402_SETTLE_TIMEOUT_MS,
    verifyTimeoutMs: variables.X402_VERIFY_TIMEOUT_MS,
    rpcUrl: variables.X402_RPC_URL,
    schemes: offeredSchemes(variables.X402_SCHEMES, facilitator.mode),
    batch: {
      settleIntervalMs: variables.X402_BATCH_SETTLE_INTERVAL_MS,
      claimThreshold: BigInt(variables.X402_BATCH_CLAIM_THRESHOLD),
      dataDir: variables.X402_BATCH_DATA_DIR,
      authorizerPrivateKey: variables.X402_BATCH_AUTHORIZER_PRIVATE_KEY as
        `0x${string}` | undefined,
    },
  };
}

function parseAddress(
  name: string,
  value: string | undefined,
  problems: string[],
  required: boolean,
): `0x${string}` | undefined {
  if (value === undefined) {
    if (required) problems.push(`${name} is required: the address that receives payments`);
    return undefined;
  }
  if (!isAddress(value, { strict: false })) {
    problems.push(`${name} must be a 0x-prefixed 20-byte address (got "${value}")`);
    return undefined;
  }
  const mixedCase = value !== value.toLowerCase() && value !== `0x${value.slice(2).toUpperCase()}`;
  if (mixedCase && getAddress(value) !== value) {
    problems.push(`${name} has an invalid EIP-55 checksum (got "${value}")`);
    return undefined;
  }
  return getAddress(value);
}

/** The token: Base's USDC by default, every field overridable, all required elsewhere. */
function parseAsset(
  variables: PaymentVariables,
  network: string,
  problems: string[],
): PaymentAsset | undefined {
  const fallback = knownNetwork(network)?.usdc;
  const address = parseAddress('X402_ASSET_ADDRESS', variables.X402_ASSET_ADDRESS, problems, false);
  const name = variables.X402_ASSET_NAME ?? fallback?.name;
  const version = variables.X402_ASSET_VERSION ?? fallback?.version;
  const resolved = address ?? fallback?.address;
  if (resolved === undefined || name === undefined || version === undefined) {
    const missing = [
      resolved === undefined && variables.X402_ASSET_ADDRESS === undefined
        ? 'X402_ASSET_ADDRESS'
        : undefined,
      name === undefined ? 'X402_ASSET_NAME' : undefined,
      version === undefined ? 'X402_ASSET_VERSION' : undefined,
    ].filter((item) => item !== undefined);
    if (missing.length > 0) {
      problems.push(`${missing.join(', ')} required: ${network} has no default USDC`);
    }
    return undefined;
  }
  return { address: resolved, name, version, decimals: variables.X402_ASSET_DECIMALS };
}

function parseFacilitator(
  variables: PaymentVariables,
  problems: string[],
): FacilitatorConfig | undefined {
  const timeoutMs = variables.X402_FACILITATOR_TIMEOUT_MS;
  switch (variables.X402_FACILITATOR) {
    case 'remote':
      return { mode: 'remote', url: variables.X402_FACILITATOR_URL.replace(/\/+$/, ''), timeoutMs };
    case 'cdp': {
      const { CDP_API_KEY_ID: apiKeyId, CDP_API_KEY_SECRET: apiKeySecret } = variables;
      if (apiKeyId === undefined || apiKeySecret === undefined) {
        problems.push(
          'CDP_API_KEY_ID and CDP_API_KEY_SECRET are required when X402_FACILITATOR=cdp',
        );
        return undefined;
      }
      return { mode: 'cdp', apiKeyId, apiKeySecret, timeoutMs };
    }
    case 'embedded': {
      const { X402_SETTLER_PRIVATE_KEY: key, X402_RPC_URL: rpcUrl } = variables;
      if (key === undefined || rpcUrl === undefined) {
        problems.push(
          'X402_SETTLER_PRIVATE_KEY and X402_RPC_URL are required when X402_FACILITATOR=embedded',
        );
        return undefined;
      }
      return {
        mode: 'embedded',
        settlerPrivateKey: key as `0x${string}`,
        rpcUrl,
        receiptMaxWaitMs:
          variables.X402_RECEIPT_POLL_MS === 0 ? undefined : variables.X402_RECEIPT_POLL_MS,
        receiptTimeoutMs: variables.X402_SETTLE_TIMEOUT_MS,
      };
    }
  }
}

/**
 * X402_SCHEMES as listed; `exact` alone by default. batch-settlement is opt-in until its claims
 * survive a voucher the chain refuses (one such voucher blocks every claim) and a payer's
 * withdrawal racing its vouchers: see the README.
 */
/**
 * Unset: both schemes with the embedded facilitator (it always does batch-settlement), `exact`
 * alone with a remote or CDP one (which may not: ask for batch-settlement explicitly there).
 */
function offeredSchemes(list: string | undefined, facilitator: string): PaymentScheme[] {
  if (list === undefined) return facilitator === 'embedded' ? ['exact', BATCH] : ['exact'];
  return [...new Set(list.split(',').map((scheme) => scheme.trim()))];
}
