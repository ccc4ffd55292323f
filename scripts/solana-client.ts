/**
 * `npm run client -- --network solana <command>`: buys one answer in USDC on Solana with
 * `@x402/fetch` and `@x402/svm`'s exact client scheme. The API, the buyer's key (a 64-byte
 * keypair, base58) and the Solana RPC come from API_URL / SOLANA_BUYER_KEY / SOLANA_RPC_URL,
 * else from the .sandbox.json a running `npm run sandbox` writes.
 */
import { createKeyPairSignerFromBytes, getBase58Encoder, type KeyPairSigner } from '@solana/kit';
import { x402Client } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import type { ClientOptions } from './client.js';
import { EXIT_FAILED, buyAndPrint } from './paid-get.js';
import { defaultStatePath, readSandboxState } from './sandbox-state.js';

interface SolanaTarget {
  readonly apiUrl: string;
  readonly buyer: KeyPairSigner;
  readonly rpcUrl: string;
}

/** Explicit options first, then the environment, then the state of a running sandbox. */
async function resolveSolanaTarget(options: ClientOptions): Promise<SolanaTarget | string> {
  const env = options.env ?? {};
  const state = readSandboxState(options.stateFile ?? defaultStatePath());
  const apiUrl = options.apiUrl ?? env['API_URL'] ?? state?.apiUrl;
  const key = env['SOLANA_BUYER_KEY'] ?? state?.solana?.buyerKey;
  const rpcUrl = env['SOLANA_RPC_URL'] ?? state?.solana?.rpcUrl;
  if (apiUrl === undefined || key === undefined || rpcUrl === undefined) {
    return (
      'No Solana buyer: start `npm run sandbox` (its local stack has a Solana side) ' +
      'or set API_URL, SOLANA_BUYER_KEY and SOLANA_RPC_URL.'
    );
  }
  try {
    const buyer = await createKeyPairSignerFromBytes(getBase58Encoder().encode(key));
    return { apiUrl: apiUrl.replace(/\/+$/, ''), buyer, rpcUrl };
  } catch {
    return 'SOLANA_BUYER_KEY must be a base58 64-byte keypair';
  }
}

/** Buys `routePath` on Solana; prints the answer, what was paid, the settlement and the attestation check. */
export async function buyOnSolana(routePath: string, options: ClientOptions): Promise<number> {
  const target = await resolveSolanaTarget(options);
  if (typeof target === 'string') {
    options.err(target);
    return EXIT_FAILED;
  }
  const client = new x402Client().register(
    'solana:*',
    new ExactSvmScheme(target.buyer, { rpcUrl: target.rpcUrl }),
  );
  return buyAndPrint(
    client,
    `${target.apiUrl}${routePath}`,
    `${target.apiUrl}/.well-known/price-attestation`,
    `Solana buyer ${target.buyer.address}`,
    options,
  );
}
