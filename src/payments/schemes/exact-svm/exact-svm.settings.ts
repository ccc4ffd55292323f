import { getBase58Encoder, isAddress } from '@solana/kit';
import { IsOptional, IsString, isURL } from 'class-validator';
import {
  URL_OPTIONS,
  type SettingsContext,
  type SettingsSection,
} from '../../../config/settings.js';
import { listedNetworks } from '../../networks/network-settings.js';
import { solanaNetwork, type SolanaConfig } from '../../networks/solana-networks.js';
import { PaymentVariables } from '../../payments.settings.js';

/**
 * `exact` on Solana's settings: read when X402_NETWORKS lists a Solana network. The problems are
 * found in `build` rather than by decorators so that no value is ever shown (a URL may carry a
 * key) and the requirement can name the networks that make it one.
 */
export class ExactSvmVariables {
  /** The wallet (owner) whose USDC token account receives payments on Solana. */
  @IsOptional()
  @IsString()
  X402_PAY_TO_SOLANA?: string;

  /** The chain the seller reads to prove and reconcile settlements, and the embedded facilitator's. */
  @IsOptional()
  @IsString()
  X402_SOLANA_RPC_URL?: string;

  /** The embedded facilitator's fee payer: a 64-byte keypair, base58 or a JSON byte array. */
  @IsOptional()
  @IsString()
  X402_SOLANA_FEE_PAYER_KEY?: string;
}

/**
 * The exact-svm scheme's own settings section; undefined when X402_NETWORKS lists no Solana
 * network. loadConfig puts it in PaymentConfig.solana, where the networks and the facilitators
 * (which name no scheme) read it.
 */
export const EXACT_SVM_SETTINGS: SettingsSection<ExactSvmVariables, SolanaConfig | undefined> = {
  token: Symbol('ExactSvmSettings'),
  variables: ExactSvmVariables,
  // RPC providers put the account's key in the URL path
  secrets: ['X402_SOLANA_FEE_PAYER_KEY', 'X402_SOLANA_RPC_URL'],
  build: (variables, { env, problems }) => {
    const payments = paymentChoices(env);
    return parseSolana(
      listedNetworks(payments),
      variables,
      payments.X402_FACILITATOR === 'embedded',
      problems,
    );
  },
};

/** X402_NETWORKS (else X402_NETWORK) and X402_FACILITATOR as the payments section reads them. */
function paymentChoices(env: SettingsContext['env']): PaymentVariables {
  const variables = new PaymentVariables();
  const set = (name: 'X402_NETWORKS' | 'X402_NETWORK' | 'X402_FACILITATOR'): string | undefined => {
    const value = env[name]?.trim();
    return value === '' ? undefined : value;
  };
  variables.X402_NETWORKS = set('X402_NETWORKS');
  variables.X402_NETWORK = set('X402_NETWORK') ?? variables.X402_NETWORK;
  variables.X402_FACILITATOR = (set('X402_FACILITATOR') ??
    variables.X402_FACILITATOR) as PaymentVariables['X402_FACILITATOR'];
  return variables;
}

/** What the Solana settings say, given X402_NETWORKS's entries; undefined: none listed or a problem. */
export function parseSolana(
  listed: readonly string[],
  variables: ExactSvmVariables,
  embedded: boolean,
  problems: string[],
): SolanaConfig | undefined {
  const networks = [...new Set(listed.map(solanaNetwork).filter((n) => n !== undefined))];
  const [first, ...rest] = networks;
  if (first === undefined) return undefined;
  const before = problems.length;
  const payTo = variables.X402_PAY_TO_SOLANA;
  if (payTo === undefined || !isAddress(payTo)) {
    problems.push(
      payTo === undefined
        ? 'X402_PAY_TO_SOLANA is required when X402_NETWORKS lists a Solana network: the wallet that receives payments'
        : `X402_PAY_TO_SOLANA must be a base58 Solana address (got "${payTo}")`,
    );
  }
  const rpcUrl = variables.X402_SOLANA_RPC_URL;
  if (rpcUrl !== undefined && !isURL(rpcUrl, URL_OPTIONS)) {
    problems.push('X402_SOLANA_RPC_URL must be an http(s) URL');
  }
  const feePayerKey = parseKeypair(variables.X402_SOLANA_FEE_PAYER_KEY, problems);
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
