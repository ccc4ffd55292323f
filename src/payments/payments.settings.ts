import { IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min } from 'class-validator';
import { URL_OPTIONS, type SettingsContext, type SettingsSection } from '../config/settings.js';
import type { PaymentAsset } from './networks/known-networks.js';
import { parseAddress, parseNetworks } from './networks/network-settings.js';
import type { SolanaConfig } from './networks/solana-networks.js';

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
      /** Settles on each network over its own RPC (PaymentNetwork.rpcUrl, required). */
      readonly mode: 'embedded';
      readonly settlerPrivateKey: `0x${string}`;
      /** Longest wait between receipt asks; undefined: a quarter of the chain's block time. */
      readonly receiptMaxWaitMs: number | undefined;
      readonly receiptTimeoutMs: number;
    };

/** One network the service sells on, with its token, its chain and its own facilitator if any. */
export interface PaymentNetwork {
  readonly network: `eip155:${number}`;
  readonly chainId: number;
  readonly asset: PaymentAsset;
  /**
   * The chain the seller reads to prove and reconcile settlements, and the embedded
   * facilitator's: X402_RPC_URL (first network) or X402_RPC_URL_<CHAIN ID> (unset: a remote
   * facilitator is trusted).
   */
  readonly rpcUrl: string | undefined;
  /** A remote facilitator of this network's own (X402_FACILITATOR_URL_<CHAIN ID>). */
  readonly facilitatorUrl: string | undefined;
}

/** How the service is paid: who receives, on which networks, in which tokens, through whom. */
export interface PaymentConfig {
  readonly payTo: `0x${string}`;
  /** X402_NETWORKS's EVM networks in order (at least one): every paid route offers each. */
  readonly networks: readonly [PaymentNetwork, ...PaymentNetwork[]];
  /**
   * X402_NETWORKS's Solana networks with their pay-to and RPC; undefined: none listed. The
   * exact-svm scheme's settings section reads them; loadConfig puts them here.
   */
  readonly solana?: SolanaConfig;
  readonly facilitator: FacilitatorConfig;
  /** Public base URL for the `resource` of payment requirements (behind a proxy). */
  readonly publicUrl: string | undefined;
  readonly maxTimeoutSeconds: number;
  /** Bounds the whole settlement (broadcast + receipt); past it the outcome is unknown. */
  readonly settleTimeoutMs: number;
  readonly verifyTimeoutMs: number;
  /** The x402 schemes every paid route offers, in this order (X402_SCHEMES). */
  readonly schemes: readonly PaymentScheme[];
}

/** An x402 scheme id, as X402_SCHEMES lists it (`exact`, `batch-settlement`). */
export type PaymentScheme = string;
const BATCH: PaymentScheme = 'batch-settlement';

export class PaymentVariables {
  @IsOptional()
  @IsString()
  X402_PAY_TO?: string;

  @IsString()
  X402_NETWORK = 'eip155:84532';

  /**
   * Comma list of networks every paid route is sold on (names or CAIP-2 ids); unset: X402_NETWORK
   * alone. The first takes X402_RPC_URL and X402_ASSET_*; each may be configured by chain id
   * (X402_RPC_URL_<ID>, X402_ASSET_ADDRESS_<ID>, …, X402_FACILITATOR_URL_<ID>).
   */
  @IsOptional()
  @Matches(/^\s*[A-Za-z0-9:-]+\s*(,\s*[A-Za-z0-9:-]+\s*)*$/, {
    message: 'X402_NETWORKS must be a comma list of networks, such as base,eip155:137',
  })
  X402_NETWORKS?: string;

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

  /** Unset: the known stablecoin's (6 for USDC); checked with the network (parseDecimals). */
  @IsOptional()
  @IsString()
  X402_ASSET_DECIMALS?: string;

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
}

export const PAYMENT_SETTINGS: SettingsSection<PaymentVariables, PaymentConfig> = {
  token: Symbol('PaymentSettings'),
  variables: PaymentVariables,
  secrets: [
    'CDP_API_KEY_SECRET',
    'X402_SETTLER_PRIVATE_KEY',
    // RPC providers put the account's key in the URL path
    'X402_RPC_URL',
    // a self-hosted facilitator's URL may carry credentials or a key in its path
    'X402_FACILITATOR_URL',
  ],
  build: (variables, context) => parsePaymentConfig(variables, context),
};

/** Reads the X402_* variables; records a problem (never a secret's value) for each bad one. */
function parsePaymentConfig(
  variables: PaymentVariables,
  { env, problems }: SettingsContext,
): PaymentConfig | undefined {
  const before = problems.length;
  const payTo = parseAddress('X402_PAY_TO', variables.X402_PAY_TO, problems, true);
  const facilitator = parseFacilitator(variables, problems);
  const networks = parseNetworks(variables, env, problems);
  if (problems.length > before || payTo === undefined || networks === undefined) return undefined;
  if (facilitator === undefined) return undefined;
  if (facilitator.mode === 'embedded') {
    const withoutRpc = networks.filter((network) => network.rpcUrl === undefined);
    if (withoutRpc.length > 0) {
      problems.push(
        `X402_SETTLER_PRIVATE_KEY and X402_RPC_URL are required when X402_FACILITATOR=embedded: ` +
          `it settles on each network's chain (X402_RPC_URL for the first, X402_RPC_URL_<CHAIN ID> ` +
          `for any), and ${withoutRpc.map((n) => n.network).join(', ')} has none`,
      );
      return undefined;
    }
  }
  return {
    payTo,
    networks,
    facilitator,
    publicUrl: variables.PUBLIC_URL?.replace(/\/+$/, ''),
    maxTimeoutSeconds: variables.X402_MAX_TIMEOUT_SECONDS,
    settleTimeoutMs: variables.X402_SETTLE_TIMEOUT_MS,
    verifyTimeoutMs: variables.X402_VERIFY_TIMEOUT_MS,
    schemes: offeredSchemes(variables.X402_SCHEMES, facilitator.mode),
  };
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
      // the RPC of each network is checked with the networks (parsePaymentConfig)
      const key = variables.X402_SETTLER_PRIVATE_KEY;
      if (key === undefined) {
        problems.push(
          'X402_SETTLER_PRIVATE_KEY and X402_RPC_URL are required when X402_FACILITATOR=embedded',
        );
        return undefined;
      }
      return {
        mode: 'embedded',
        settlerPrivateKey: key as `0x${string}`,
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
