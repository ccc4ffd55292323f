import { x402Client, wrapFetchWithPayment as wrapFetchV2 } from '@x402/fetch';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { wrapFetchWithPayment as wrapFetchV1 } from 'x402-fetch';
import type { LocalChain } from './chain.js';

/** A buyer with USDC and no ETH, and the two generations of official x402 clients for it. */
export interface Buyer {
  readonly account: PrivateKeyAccount;
  /** `@x402/fetch` 2.x: reads PAYMENT-REQUIRED, pays with PAYMENT-SIGNATURE. */
  readonly fetchV2: typeof fetch;
  /** `x402-fetch` 1.x: reads the 402 body, pays with X-PAYMENT. */
  readonly fetchV1: typeof fetch;
}

/**
 * The official clients pay only in the stablecoins `@x402/evm` knows unless told otherwise: on a
 * local chain with its own id, the test token is allowed by name.
 */
export function onlyTestToken(
  chain: LocalChain,
  network: string,
): { spendControls?: { allowedAssets: { network: `${string}:${string}`; asset: string }[] } } {
  if (network === 'eip155:*') return {};
  return {
    spendControls: {
      allowedAssets: [{ network: network as `${string}:${string}`, asset: chain.usdcAddress }],
    },
  };
}

/** One USDC in atomic units. */
export const USDC = 1_000_000n;

/** `network`: the one network the v2 client pays on (a CAIP-2 id); any EVM network by default. */
export async function fundedBuyer(
  chain: LocalChain,
  atomicUsdc = 10n * USDC,
  network = 'eip155:*',
): Promise<Buyer> {
  const account = privateKeyToAccount(generatePrivateKey());
  await chain.mintUsdc(account.address, atomicUsdc);
  return {
    account,
    fetchV2: wrapFetchV2(
      fetch,
      x402Client.fromConfig({
        schemes: [
          { network: network as `${string}:${string}`, client: new ExactEvmScheme(account) },
        ],
        ...onlyTestToken(chain, network),
      }),
    ),
    fetchV1: wrapFetchV1(fetch, account, USDC / 10n) as typeof fetch,
  };
}
