import { isURL } from 'class-validator';
import { getAddress, isAddress } from 'viem';
import { URL_OPTIONS, type SettingsContext } from '../../config/settings.js';
import type { PaymentConfig, PaymentNetwork, PaymentVariables } from '../payments.settings.js';
import { knownNetwork, resolveNetwork, type PaymentAsset } from './known-networks.js';
import { solanaNetwork } from './solana-networks.js';

/**
 * X402_NETWORKS read into networks: each with its token, chain RPC and facilitator, from the
 * known-networks table and the variables named by chain id (X402_<SETTING>_<CHAIN ID>).
 */

/**
 * X402_NETWORKS (else X402_NETWORK), each with its token and chain: the unsuffixed X402_RPC_URL
 * and X402_ASSET_* configure the first network, X402_<…>_<CHAIN ID> any network (and win).
 */
export function parseNetworks(
  variables: PaymentVariables,
  env: SettingsContext['env'],
  problems: string[],
): PaymentConfig['networks'] | undefined {
  // the Solana ones are read by the exact-svm settings section
  const listed = listedNetworks(variables).filter((name) => solanaNetwork(name) === undefined);
  const variable = variables.X402_NETWORKS === undefined ? 'X402_NETWORK' : 'X402_NETWORKS';
  if (listed.length === 0) {
    problems.push(`${variable} must list at least one EVM network (Solana is sold next to one)`);
    return undefined;
  }
  const networks: PaymentNetwork[] = [];
  for (const [index, name] of listed.entries()) {
    const network = resolveNetwork(name);
    if (network === undefined) {
      problems.push(
        `${variable} must list base, base-sepolia, a network @x402/evm knows (polygon, arbitrum, …) or a CAIP-2 id such as eip155:84532 (got "${name}")`,
      );
      continue;
    }
    if (networks.some((known) => known.network === network)) {
      problems.push(`${variable} lists ${network} twice`);
      continue;
    }
    const chainId = Number(network.split(':')[1]);
    const own = (base: string): string | undefined =>
      env[`${base}_${chainId}`] ?? (index === 0 ? env[base] : undefined);
    const asset = parseAsset(network, chainId, index === 0, env, variables, problems);
    const rpcUrl = urlOf(`X402_RPC_URL_${chainId}`, own('X402_RPC_URL'), problems);
    const facilitatorUrl = urlOf(
      `X402_FACILITATOR_URL_${chainId}`,
      env[`X402_FACILITATOR_URL_${chainId}`],
      problems,
    );
    if (asset === undefined) continue;
    networks.push({ network, chainId, asset, rpcUrl, facilitatorUrl });
  }
  const [first, ...rest] = networks;
  return first === undefined || networks.length !== listed.length ? undefined : [first, ...rest];
}

/** X402_NETWORKS (else X402_NETWORK) as listed. */
export function listedNetworks(variables: PaymentVariables): string[] {
  return (variables.X402_NETWORKS ?? variables.X402_NETWORK).split(',').map((name) => name.trim());
}

/** A URL setting by pattern name (never shown: it may carry a key). */
function urlOf(name: string, value: string | undefined, problems: string[]): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!isURL(value, URL_OPTIONS)) {
    problems.push(`${name} must be an http(s) URL`);
    return undefined;
  }
  return value.replace(/\/+$/, '');
}

export function parseAddress(
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

/**
 * A network's token: the default stablecoin @x402/evm knows for it, every field overridable
 * (X402_ASSET_*_<CHAIN ID>, or unsuffixed for the first network), all required elsewhere.
 */
function parseAsset(
  network: `eip155:${number}`,
  chainId: number,
  first: boolean,
  env: SettingsContext['env'],
  variables: PaymentVariables,
  problems: string[],
): PaymentAsset | undefined {
  const fallback = knownNetwork(network)?.usdc;
  const setting = (
    base: 'ADDRESS' | 'NAME' | 'VERSION' | 'DECIMALS',
  ): [string, string | undefined] => {
    const suffixed = `X402_ASSET_${base}_${chainId}`;
    if (env[suffixed] !== undefined) return [suffixed, env[suffixed]];
    if (!first) return [suffixed, undefined];
    const unsuffixed = `X402_ASSET_${base}` as const;
    return [unsuffixed, variables[unsuffixed]];
  };
  const [addressName, addressValue] = setting('ADDRESS');
  const address = parseAddress(addressName, addressValue, problems, false);
  const name = setting('NAME')[1] ?? fallback?.name;
  const version = setting('VERSION')[1] ?? fallback?.version;
  const decimals = parseDecimals(setting('DECIMALS'), fallback?.decimals ?? 6, problems);
  const resolved = address ?? fallback?.address;
  if (resolved === undefined || name === undefined || version === undefined) {
    const missing = [
      resolved === undefined && addressValue === undefined ? setting('ADDRESS')[0] : undefined,
      name === undefined ? setting('NAME')[0] : undefined,
      version === undefined ? setting('VERSION')[0] : undefined,
    ].filter((item) => item !== undefined);
    if (missing.length > 0) {
      problems.push(`${missing.join(', ')} required: ${network} has no default USDC`);
    }
    return undefined;
  }
  if (decimals === undefined) return undefined;
  return { address: resolved, name, version, decimals };
}

function parseDecimals(
  [name, value]: [string, string | undefined],
  fallback: number,
  problems: string[],
): number | undefined {
  if (value === undefined) return fallback;
  const decimals = Number(value);
  if (!/^\d{1,2}$/.test(value) || decimals > 36) {
    problems.push(`${name} must be an integer from 0 to 36`);
    return undefined;
  }
  return decimals;
}
