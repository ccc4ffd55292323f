import {
  SOLANA_DEVNET_CAIP2,
  SOLANA_MAINNET_CAIP2,
  USDC_DEVNET_ADDRESS,
  USDC_MAINNET_ADDRESS,
} from '@x402/svm';

/**
 * The Solana networks X402_NETWORKS may list (`solana`, `solana-devnet` or their CAIP-2 ids),
 * each with USDC's mint, and what selling on them needs (SolanaConfig): read by the exact-svm
 * scheme's settings section (schemes/exact-svm/exact-svm.settings.ts), defined here so the
 * networks and the facilitators read it without naming a scheme.
 */

/** A Solana network the service sells on, in USDC (an SPL token with 6 decimals). */
export interface SolanaNetwork {
  readonly network: `solana:${string}`;
  readonly mint: string;
  readonly decimals: number;
}

/** How the service is paid on Solana. */
export interface SolanaConfig {
  /** The wallet (owner) whose USDC token account receives payments. */
  readonly payTo: string;
  readonly networks: readonly [SolanaNetwork, ...SolanaNetwork[]];
  /** The chain the seller reads to prove and reconcile settlements (unset: a remote facilitator is trusted). */
  readonly rpcUrl: string | undefined;
  /** The embedded facilitator's fee payer (64-byte keypair), secret. */
  readonly feePayerKey: Uint8Array | undefined;
}

const KNOWN: readonly { names: readonly string[]; network: SolanaNetwork }[] = [
  {
    names: ['solana', SOLANA_MAINNET_CAIP2],
    network: { network: SOLANA_MAINNET_CAIP2, mint: USDC_MAINNET_ADDRESS, decimals: 6 },
  },
  {
    names: ['solana-devnet', SOLANA_DEVNET_CAIP2],
    network: { network: SOLANA_DEVNET_CAIP2, mint: USDC_DEVNET_ADDRESS, decimals: 6 },
  },
];

/** The Solana network a name in X402_NETWORKS stands for; undefined: not a Solana one. */
export function solanaNetwork(name: string): SolanaNetwork | undefined {
  return KNOWN.find(({ names }) => names.includes(name))?.network;
}
