/** An EIP-3009 token the service is paid in, with its EIP-712 domain. */
export interface PaymentAsset {
  readonly address: `0x${string}`;
  readonly name: string;
  readonly version: string;
  readonly decimals: number;
}

/** A network x402 knows by name: its CAIP-2 id, v1 name and USDC deployment. */
export interface KnownNetwork {
  readonly caip2: `eip155:${number}`;
  readonly v1Name: string;
  readonly usdc: PaymentAsset;
}

export const KNOWN_NETWORKS: readonly KnownNetwork[] = [
  {
    caip2: 'eip155:8453',
    v1Name: 'base',
    usdc: {
      address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      name: 'USD Coin',
      version: '2',
      decimals: 6,
    },
  },
  {
    caip2: 'eip155:84532',
    v1Name: 'base-sepolia',
    usdc: {
      address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      name: 'USDC',
      version: '2',
      decimals: 6,
    },
  },
];

/** `base`, `base-sepolia` or a CAIP-2 `eip155:<chain id>` to the CAIP-2 id; undefined if neither. */
export function resolveNetwork(value: string): `eip155:${number}` | undefined {
  const known = KNOWN_NETWORKS.find(
    (network) => network.v1Name === value || network.caip2 === value,
  );
  if (known !== undefined) return known.caip2;
  const match = /^eip155:([1-9]\d{0,18})$/.exec(value);
  return match === null ? undefined : `eip155:${Number(match[1])}`;
}

export function knownNetwork(caip2: string): KnownNetwork | undefined {
  return KNOWN_NETWORKS.find((network) => network.caip2 === caip2);
}

/** The v1 wire name of a network (`base-sepolia`), or its CAIP-2 id when v1 has no name for it. */
export function v1NetworkName(caip2: string): string {
  return knownNetwork(caip2)?.v1Name ?? caip2;
}

/** The CAIP-2 id a v1 network name stands for. */
export function networkFromV1Name(name: string): string {
  return KNOWN_NETWORKS.find((network) => network.v1Name === name)?.caip2 ?? name;
}
