import type { PaymentRequirements } from '@x402/core/types';
import type { CreateAppOptions } from '../../src/app.js';
import { startLocalChain, type LocalChain } from './chain.js';
import { FakeMarkets, type FakeMarketsOptions } from './fake-markets.js';
import { fundedBuyer, type Buyer } from './paying-clients.js';
import { Started } from './started.js';
import { startApp, type RunningApp } from './test-app.js';
import { paymentRequiredOf } from './x402-payloads.js';

/** Everything a paid request touches, real and on loopback: venues, chain, facilitator, app. */
export interface PaidApp {
  readonly chain: LocalChain;
  readonly markets: FakeMarkets;
  readonly service: RunningApp;
  readonly buyer: Buyer;
  readonly payTo: `0x${string}`;
  /** USDC balances of the buyer and the receiver, read on chain. */
  balances(): Promise<{ buyer: bigint; payTo: bigint }>;
  close(): Promise<void>;
}

export interface PaidAppOptions {
  readonly markets?: FakeMarketsOptions;
  readonly env?: Record<string, string>;
  /** Run a refresh round before returning (default true). */
  readonly refresh?: boolean;
  /** Starts something on the chain before the app (a facilitator server) and returns its env. */
  readonly beforeApp?: (chain: LocalChain) => Promise<Record<string, string>>;
  /** Feature modules served beside the built-in ones. */
  readonly features?: CreateAppOptions['features'];
  /** The chain's extra block every this many seconds (see `StartLocalChainOptions`). */
  readonly intervalMiningSeconds?: number;
  /** Where the app writes its log lines (none by default). */
  readonly logDestination?: CreateAppOptions['logDestination'];
}

/**
 * A local anvil that looks like Base Sepolia (test USDC at the real address), the app with the
 * in-process facilitator settling on it, fake venues, and a funded buyer.
 */
export async function startPaidApp(options: PaidAppOptions = {}): Promise<PaidApp> {
  const started = new Started();
  try {
    const chain = await startLocalChain(
      options.intervalMiningSeconds === undefined
        ? {}
        : { intervalMiningSeconds: options.intervalMiningSeconds },
    );
    started.defer(() => chain.stop());
    const markets = await started.add(FakeMarkets.start(options.markets));
    const service = await started.add(
      startApp(
        {
          ...markets.env(),
          X402_FACILITATOR: 'embedded',
          X402_NETWORK: 'base-sepolia',
          X402_PAY_TO: PAY_TO,
          X402_SETTLER_PRIVATE_KEY: chain.accounts[0]!,
          X402_RPC_URL: chain.rpcUrl,
          X402_RECEIPT_POLL_MS: '20',
          ...options.env,
          ...((await options.beforeApp?.(chain)) ?? {}),
        },
        options.features,
        options.logDestination,
      ),
    );
    if (options.refresh ?? true) await service.refresh();
    const buyer = await fundedBuyer(chain);
    return {
      chain,
      markets,
      service,
      buyer,
      payTo: PAY_TO,
      balances: async () => ({
        buyer: await chain.usdcBalance(buyer.account.address),
        payTo: await chain.usdcBalance(PAY_TO),
      }),
      close: () => started.closeAll(),
    };
  } catch (error) {
    await started.closeAll().catch(() => undefined);
    throw error;
  }
}

const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as const;

/** The first requirement a paid route offers, read from its 402. */
export async function requirementFor(stack: PaidApp, path: string): Promise<PaymentRequirements> {
  const challenge = await stack.service.get(path);
  if (challenge.status !== 402) throw new Error(`${path} answered ${challenge.status}, not 402`);
  const accepted = paymentRequiredOf(challenge).accepts[0];
  if (accepted === undefined) throw new Error('402 without requirements');
  return accepted;
}

/** A JSON response body as a record, for matching fields. */
export async function responseJson(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}
