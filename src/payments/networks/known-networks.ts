import { DEFAULT_ASSETS } from '@x402/evm';
import { EVM_NETWORK_CHAIN_ID_MAP } from '@x402/evm/v1';

/** An EIP-3009 token the service is paid in, with its EIP-712 domain. */
export interface PaymentAsset {
  readonly address: `0x${string}`;
  readonly name: string;
  readonly version: string;
  readonly decimals: number;
}

/** A network x402 knows: its CAIP-2 id, v1 name (if v1 has one) and default stablecoin. */
export interface KnownNetwork {
  readonly caip2: `eip155:${number}`;
  readonly v1Name: string | undefined;
  readonly usdc: PaymentAsset;
}

/**
 * The one table of known networks: every EVM network `@x402/evm` has a default stablecoin for
 * that moves by EIP-3009 (Base, Base Sepolia, Polygon, Arbitrum, Avalanche, …; the Permit2-only
 * ones are left out: `exact` here sells EIP-3009 transfers), with v1's name for it. Another
 * network is configured by chain id, asset and RPC (README, "Networks").
 */
export const KNOWN_NETWORKS: readonly KnownNetwork[] = Object.entries(DEFAULT_ASSETS).flatMap(
  ([caip2, assets]) => {
    const asset = assets[0];
    const chainId = Number(caip2.split(':')[1]);
    if (asset === undefined || 'assetTransferMethod' in asset || !caip2.startsWith('eip155:')) {
      return [];
    }
    return [
      {
        caip2: `eip155:${chainId}` as const,
        v1Name: Object.entries(EVM_NETWORK_CHAIN_ID_MAP).find(([, id]) => id === chainId)?.[0],
        usdc: {
          address: asset.asset as `0x${string}`,
          name: asset.name,
          version: asset.version,
          decimals: asset.decimals,
        },
      },
    ];
  },
);

/** A v1 name (`base`, `polygon`) or a CAIP-2 `eip155:<chain id>` to the CAIP-2 id; else undefined. */
export function resolveNetwork(value: string): `eip155:${number}` | undefined {
  const named = Object.entries(EVM_NETWORK_CHAIN_ID_MAP).find(([name]) => name === value)?.[1];
  if (named !== undefined) return `eip155:${named}`;
  const match = /^eip155:([1-9]\d{0,18})$/.exec(value);
  return match === null ? undefined : `eip155:${Number(match[1])}`;
}

export function knownNetwork(caip2: string): KnownNetwork | undefined {
  return KNOWN_NETWORKS.find((network) => network.caip2 === caip2);
}

/** The v1 wire name of a network (`base-sepolia`), or its CAIP-2 id when v1 has no name for it. */
export function v1NetworkName(caip2: string): string {
  const chainId = Number(caip2.split(':')[1]);
  return Object.entries(EVM_NETWORK_CHAIN_ID_MAP).find(([, id]) => id === chainId)?.[0] ?? caip2;
}

/** The CAIP-2 id a v1 network name stands for. */
export function networkFromV1Name(name: string): string {
  return resolveNetwork(name) ?? name;
}
