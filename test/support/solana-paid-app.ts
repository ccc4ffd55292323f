import type { PaymentRequirements } from '@x402/core/types';
import { SOLANA_DEVNET_CAIP2 } from '@x402/svm';
import type { KeyPairSigner } from '@solana/kit';
import { startPaidApp, type PaidApp } from './paid-app.js';
import { RpcProxy } from './rpc-proxy.js';
import { handBuiltTransaction, solanaKeypair } from './solana-buyers.js';
import { SolanaRpcServer } from './solana-rpc.js';
import { v2Header, paymentRequiredOf } from './x402-payloads.js';

/**
 * The paid app selling on Base Sepolia (local anvil) and Solana devnet (the local Solana VM,
 * behind an RPC proxy a test can break), both with embedded facilitators, `exact` only.
 */

export const SOLD_ROUTE = '/v1/ticker/BTC';

export interface SolanaPaidApp {
  readonly stack: PaidApp;
  readonly rpc: SolanaRpcServer;
  /** Between the app and the Solana RPC. */
  readonly proxy: RpcProxy;
  readonly payTo: KeyPairSigner;
  /** SOLD_ROUTE's Solana offer, from its 402. */
  readonly offer: PaymentRequirements;
  payToBalance(): Promise<bigint>;
  /** A buyer holding 1 USDC (atomic: 1,000,000) and a payment of SOLD_ROUTE it signed. */
  fundedPayment(): Promise<{ buyer: KeyPairSigner; transaction: string }>;
  /** SOLD_ROUTE bought with `transaction` (and a payment-identifier, if given). */
  pay(transaction: string, paymentId?: string): Promise<Response>;
  close(): Promise<void>;
}

export async function startSolanaPaidApp(): Promise<SolanaPaidApp> {
  const rpc = await SolanaRpcServer.start();
  const proxy = await RpcProxy.start(rpc.url);
  const feePayer = await solanaKeypair();
  const payTo = (await solanaKeypair()).signer;
  rpc.vm.airdrop(feePayer.signer.address, 10_000_000_000n);
  await rpc.vm.setTokenBalance(payTo.address, 0n);
  const stack = await startPaidApp({
    env: {
      X402_NETWORKS: 'base-sepolia,solana-devnet',
      X402_SCHEMES: 'exact',
      X402_SETTLE_TIMEOUT_MS: '1500',
      X402_PAY_TO_SOLANA: payTo.address,
      X402_SOLANA_RPC_URL: proxy.url,
      X402_SOLANA_FEE_PAYER_KEY: JSON.stringify([...feePayer.bytes]),
    },
  });
  const offer = paymentRequiredOf(await stack.service.get(SOLD_ROUTE)).accepts.find(
    (accepted) => accepted.network === SOLANA_DEVNET_CAIP2,
  );
  if (offer === undefined) throw new Error('the 402 does not offer Solana');
  return {
    stack,
    rpc,
    proxy,
    payTo,
    offer,
    payToBalance: () => rpc.vm.tokenBalance(payTo.address),
    fundedPayment: async () => {
      const buyer = (await solanaKeypair()).signer;
      await rpc.vm.setTokenBalance(buyer.address, 1_000_000n);
      return { buyer, transaction: await handBuiltTransaction(rpc, buyer, offer) };
    },
    pay: (transaction, paymentId) =>
      stack.service.get(SOLD_ROUTE, {
        headers: v2Header({
          x402Version: 2,
          accepted: offer,
          payload: { transaction },
          ...(paymentId === undefined
            ? {}
            : {
                extensions: { 'payment-identifier': { info: { required: false, id: paymentId } } },
              }),
        }),
      }),
    close: async () => {
      await stack.close();
      await proxy.close();
      await rpc.close();
    },
  };
}

/** Asks `probe` every 100 ms until it holds (at most `ms`). */
export async function eventually(probe: () => Promise<boolean>, ms = 10_000): Promise<void> {
  for (const until = Date.now() + ms; Date.now() < until;) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`not within ${ms} ms`);
}
