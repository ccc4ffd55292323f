/**
 * `npm run client -- --network solana <command>`: buys one answer in USDC on Solana with
 * `@x402/fetch` and `@x402/svm`'s exact client scheme. The API, the buyer's key (a 64-byte
 * keypair, base58) and the Solana RPC come from API_URL / SOLANA_BUYER_KEY / SOLANA_RPC_URL,
 * else from the .sandbox.json a running `npm run sandbox` writes.
 */
import { createKeyPairSignerFromBytes, getBase58Encoder, type KeyPairSigner } from '@solana/kit';
import { wrapFetchWithPayment, x402Client, type PaymentRequirements } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { verifyAnswer } from './answer-attestation.js';
import type { ClientOptions } from './client.js';
import {
  describeError,
  describePaid,
  describeSettlement,
  paymentReceipt,
  prettyJson,
} from './purchase-lines.js';
import { defaultStatePath, readSandboxState } from './sandbox-state.js';

const EXIT_OK = 0;
const EXIT_FAILED = 1;

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
  const url = `${target.apiUrl}${routePath}`;
  let chosen: PaymentRequirements | undefined;
  const client = new x402Client()
    .register('solana:*', new ExactSvmScheme(target.buyer, { rpcUrl: target.rpcUrl }))
    .onAfterPaymentCreation(({ selectedRequirements }) => {
      chosen = selectedRequirements;
      return Promise.resolve();
    });
  options.out(`GET ${url}  (Solana buyer ${target.buyer.address})`);
  let response: Response;
  let body: string;
  try {
    response = await wrapFetchWithPayment(options.fetch ?? fetch, client)(url);
    body = await response.text();
  } catch (error) {
    options.err(`Request failed: ${describeError(error)}`);
    return EXIT_FAILED;
  }
  const receipt = paymentReceipt(response);
  if (response.status !== 200) {
    options.err(`HTTP ${response.status} ${response.statusText}`);
    options.err(prettyJson(body));
    return EXIT_FAILED;
  }
  options.out(prettyJson(body));
  options.out(
    chosen === undefined ? 'paid nothing: no payment was asked for' : describePaid(chosen),
  );
  options.out(describeSettlement(receipt));
  const attestationInfoUrl = `${target.apiUrl}/.well-known/price-attestation`;
  const verdict = await verifyAnswer(response, body, attestationInfoUrl, options.fetch ?? fetch);
  (verdict.ok ? options.out : options.err)(verdict.line);
  return verdict.ok ? EXIT_OK : EXIT_FAILED;
}
