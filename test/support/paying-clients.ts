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

/** One USDC in atomic units. */
export const USDC = 1_000_000n;

export async function fundedBuyer(chain: LocalChain, atomicUsdc = 10n * USDC): Promise<Buyer> {
  const account = privateKeyToAccount(generatePrivateKey());
  await chain.mintUsdc(account.address, atomicUsdc);
  return {
    account,
    fetchV2: wrapFetchV2(fetch, new x402Client().register('eip155:*', new ExactEvmScheme(account))),
    fetchV1: wrapFetchV1(fetch, account, USDC / 10n) as typeof fetch,
  };
}
