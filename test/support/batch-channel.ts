import { decodePaymentSignatureHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { LocalChain } from './chain.js';
import type { FakeMarkets } from './fake-markets.js';
import { USDC, onlyTestToken } from './paying-clients.js';

/**
 * Settings for an app whose batch claims the test makes by hand (`claimAndSettle`): no claim
 * timer within a test's time, no threshold claims.
 */
export const CLAIMS_BY_HAND = {
  X402_BATCH_SETTLE_INTERVAL_MS: '600000',
  X402_BATCH_CLAIM_THRESHOLD: '0',
} as const;

/** A channel's escrowed balance and claimed total, as the channel contract holds them. */
export async function channelOnChain(
  chain: LocalChain,
  channelId: Hex,
): Promise<{ balance: bigint; totalClaimed: bigint }> {
  const [balance, totalClaimed] = await chain.publicClient.readContract({
    address: chain.batchSettlementAddress,
    abi: CHANNEL_VIEWS_ABI,
    functionName: 'channels',
    args: [channelId],
  });
  return { balance, totalClaimed };
}

/** The batch-settlement channel contract's views the tests read balances and totals from. */
export const CHANNEL_VIEWS_ABI = [
  {
    type: 'function',
    name: 'channels',
    stateMutability: 'view',
    inputs: [{ name: 'channelId', type: 'bytes32' }],
    outputs: [
      { name: 'balance', type: 'uint128' },
      { name: 'totalClaimed', type: 'uint128' },
    ],
  },
  {
    type: 'function',
    name: 'receivers',
    stateMutability: 'view',
    inputs: [
      { name: 'receiver', type: 'address' },
      { name: 'token', type: 'address' },
    ],
    outputs: [
      { name: 'totalClaimed', type: 'uint128' },
      { name: 'totalSettled', type: 'uint128' },
    ],
  },
  {
    type: 'function',
    name: 'refundNonce',
    stateMutability: 'view',
    inputs: [{ name: 'channelId', type: 'bytes32' }],
    outputs: [{ name: '', type: 'uint256' }],
  },
] as const;

/** The channel contract's ChannelConfig tuple. */
export const CHANNEL_CONFIG_COMPONENTS = [
  { name: 'payer', type: 'address' },
  { name: 'payerAuthorizer', type: 'address' },
  { name: 'receiver', type: 'address' },
  { name: 'receiverAuthorizer', type: 'address' },
  { name: 'token', type: 'address' },
  { name: 'withdrawDelay', type: 'uint40' },
  { name: 'salt', type: 'bytes32' },
] as const;

/** The payer's timed withdrawal. */
export const WITHDRAW_ABI = [
  {
    type: 'function',
    name: 'initiateWithdraw',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'config', type: 'tuple', components: CHANNEL_CONFIG_COMPONENTS },
      { name: 'amount', type: 'uint128' },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'finalizeWithdraw',
    stateMutability: 'nonpayable',
    inputs: [{ name: 'config', type: 'tuple', components: CHANNEL_CONFIG_COMPONENTS }],
    outputs: [],
  },
] as const;

/** A buyer paying through a channel with the official client, every payment header it sent kept. */
export interface BatchBuyer {
  readonly account: PrivateKeyAccount;
  readonly fetch: typeof fetch;
  /** Every PAYMENT-SIGNATURE the client sent, decoded, in order. */
  readonly sent: PaymentPayload[];
  /** The SDK's client scheme the fetch pays with (its channel state), to sign payloads directly. */
  readonly scheme: BatchSettlementEvmScheme;
}

/**
 * `@x402/fetch` with the SDK's batch-settlement client scheme, for a new key (or `key`: one of
 * anvil's funded accounts, when the buyer must send its own transactions) holding 1 USDC (or
 * `funds`).
 */
export async function batchBuyer(
  chain: LocalChain,
  /** `network`: the one network the client pays on (a CAIP-2 id); any EVM network by default. */
  options: {
    key?: Hex;
    depositMultiplier?: number;
    network?: `${string}:${string}`;
    /** The test USDC it holds, in atomic units; 1 USDC by default. */
    funds?: bigint;
  } = {},
): Promise<BatchBuyer> {
  const account = privateKeyToAccount(options.key ?? generatePrivateKey());
  await chain.mintUsdc(account.address, options.funds ?? USDC);
  const sent: PaymentPayload[] = [];
  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const header = request.headers.get('payment-signature');
    if (header !== null) sent.push(decodePaymentSignatureHeader(header));
    return fetch(request);
  };
  const scheme = new BatchSettlementEvmScheme(account, {
    rpcUrl: chain.rpcUrl,
    ...(options.depositMultiplier === undefined
      ? {}
      : { depositPolicy: { depositMultiplier: options.depositMultiplier } }),
  });
  const network = options.network ?? 'eip155:*';
  const client = x402Client.fromConfig({
    schemes: [{ network, client: scheme }],
    ...onlyTestToken(chain, network),
  });
  return { account, fetch: wrapFetchWithPayment(recording, client), sent, scheme };
}

/**
 * The PAYMENT-SIGNATURE header of a voucher signed by hand on the `accepted` offer, under the
 * payment-identifier `id` when given.
 */
export function voucherHeader(
  accepted: PaymentRequirements,
  channelConfig: object,
  voucher: object,
  id?: string,
): string {
  return encodePaymentSignatureHeader({
    x402Version: 2,
    accepted,
    payload: { type: 'voucher', channelConfig, voucher },
    ...(id === undefined
      ? {}
      : { extensions: { 'payment-identifier': { info: { required: false, id } } } }),
  });
}

/**
 * The environment of a built service (ServiceProcess) selling `exact` and `batch-settlement` on
 * the local chain through the embedded facilitator: channels in `dataDir`, claims every second,
 * settled by anvil account `settlerIndex`, chain calls to `rpcUrl` (the chain's, or a proxy's).
 */
export function batchServiceEnv(
  chain: LocalChain,
  markets: FakeMarkets,
  options: { payTo: string; settlerIndex: number; dataDir: string; rpcUrl?: string },
): Record<string, string> {
  return {
    ...markets.env(),
    X402_FACILITATOR: 'embedded',
    X402_NETWORK: 'base-sepolia',
    X402_SCHEMES: 'exact,batch-settlement',
    X402_PAY_TO: options.payTo,
    X402_SETTLER_PRIVATE_KEY: chain.accounts[options.settlerIndex]!,
    X402_BATCH_AUTHORIZER_PRIVATE_KEY: chain.accounts[5]!,
    X402_RPC_URL: options.rpcUrl ?? chain.rpcUrl,
    X402_RECEIPT_POLL_MS: '20',
    X402_BATCH_SETTLE_INTERVAL_MS: '1000',
    X402_BATCH_DATA_DIR: options.dataDir,
  };
}
