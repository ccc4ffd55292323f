import { getAddress, isAddress } from 'viem';
import { knownNetwork, resolveNetwork, type PaymentAsset } from '../payments/networks.js';
import type { EnvironmentVariables } from './environment.js';

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

export type PaymentScheme = 'exact' | 'batch-settlement';

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

/** Reads the X402_* variables; records a problem (never a secret's value) for each bad one. */
export function parsePaymentConfig(
  variables: EnvironmentVariables,
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
    schemes: [
      ...new Set(variables.X402_SCHEMES.split(',').map((scheme) => scheme.trim() as PaymentScheme)),
    ],
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
  variables: EnvironmentVariables,
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
  variables: EnvironmentVariables,
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
