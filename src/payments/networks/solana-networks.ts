import { getBase58Encoder, isAddress } from '@solana/kit';
import {
  SOLANA_DEVNET_CAIP2,
  SOLANA_MAINNET_CAIP2,
  USDC_DEVNET_ADDRESS,
  USDC_MAINNET_ADDRESS,
} from '@x402/svm';
import { isURL } from 'class-validator';
import { URL_OPTIONS } from '../../config/settings.js';

/**
 * The Solana networks X402_NETWORKS may list (`solana`, `solana-devnet` or their CAIP-2 ids),
 * each with USDC's mint, and the Solana settings: X402_PAY_TO_SOLANA (the receiving wallet),
 * X402_SOLANA_RPC_URL, X402_SOLANA_FEE_PAYER_KEY (the embedded facilitator's, secret).
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

/** What the Solana settings say, given X402_NETWORKS's Solana entries; undefined: none listed or a problem. */
export function parseSolana(
  listed: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  embedded: boolean,
  problems: string[],
): SolanaConfig | undefined {
  const networks = [...new Set(listed.map(solanaNetwork).filter((n) => n !== undefined))];
  const [first, ...rest] = networks;
  if (first === undefined) return undefined;
  const before = problems.length;
  const payTo = env['X402_PAY_TO_SOLANA'];
  if (payTo === undefined || !isAddress(payTo)) {
    problems.push(
      payTo === undefined
        ? 'X402_PAY_TO_SOLANA is required when X402_NETWORKS lists a Solana network: the wallet that receives payments'
        : `X402_PAY_TO_SOLANA must be a base58 Solana address (got "${payTo}")`,
    );
  }
  const rpcUrl = env['X402_SOLANA_RPC_URL'];
  if (rpcUrl !== undefined && !isURL(rpcUrl, URL_OPTIONS)) {
    problems.push('X402_SOLANA_RPC_URL must be an http(s) URL');
  }
  const feePayerKey = parseKeypair(env['X402_SOLANA_FEE_PAYER_KEY'], problems);
  if (embedded && (feePayerKey === undefined || rpcUrl === undefined)) {
    problems.push(
      'X402_SOLANA_FEE_PAYER_KEY and X402_SOLANA_RPC_URL are required when X402_FACILITATOR=embedded ' +
        'sells on Solana: the fee payer signs and submits each transfer there',
    );
  }
  if (problems.length > before || payTo === undefined) return undefined;
  return {
    payTo,
    networks: [first, ...rest],
    rpcUrl: rpcUrl?.replace(/\/+$/, ''),
    feePayerKey,
  };
}

/** A 64-byte keypair, base58 (a wallet's export) or a JSON byte array (solana-keygen's file). */
function parseKeypair(value: string | undefined, problems: string[]): Uint8Array | undefined {
  if (value === undefined || value === '') return undefined;
  let bytes: Uint8Array | undefined;
  try {
    bytes = value.trim().startsWith('[')
      ? Uint8Array.from(JSON.parse(value) as number[])
      : new Uint8Array(getBase58Encoder().encode(value.trim()));
  } catch {
    bytes = undefined;
  }
  if (bytes?.length !== 64) {
    problems.push(
      'X402_SOLANA_FEE_PAYER_KEY must be a 64-byte keypair, base58 or a JSON byte array',
    );
    return undefined;
  }
  return bytes;
}
