import { TransactionReceiptNotFoundError, createPublicClient, type PublicClient } from 'viem';
import { jsonRpcTransport } from './json-rpc-transport.js';
import {
  EIP3009_EVENTS,
  EIP3009_STATE_ABI,
  receiptProvesPayment,
  type Eip3009Payment,
  type ReceiptEvidence,
} from './settlement-proof.js';

/** The SettlementChains of this service: each network's chain, where it can be read. */
export const SETTLEMENT_CHAINS = Symbol('SettlementChains');

/** The chain of each network the seller reads, null for a network without an RPC. */
export class SettlementChains {
  constructor(private readonly byNetwork: ReadonlyMap<string, SettlementChain>) {}

  /** The chain of a payment's network, or null when it cannot be read (no RPC configured). */
  of(network: string): SettlementChain | null {
    return this.byNetwork.get(network) ?? null;
  }

  /** Whether any network's chain can be read. */
  get any(): boolean {
    return this.byNetwork.size > 0;
  }
}

/** How far back an authorization's use is looked for: hours on Base, far past any validBefore. */
const LOOKBACK_BLOCKS = 5_000n;
const RPC_TIMEOUT_MS = 5_000;

/**
 * The chain as the seller reads it to prove or reconcile a settlement, independently of the
 * facilitator: a receipt, whether an EIP-3009 authorization was used, and by which transaction.
 */
export interface SettlementChain {
  /** The receipt, or undefined while the transaction is not mined (or unknown to the node). */
  receipt(transaction: `0x${string}`): Promise<ReceiptEvidence | undefined>;
  /** The token's `authorizationState(payer, nonce)`: used (or cancelled) on chain. */
  authorizationUsed(payment: Eip3009Payment): Promise<boolean>;
  /** The transaction that emitted `AuthorizationUsed(payer, nonce)` in recent blocks, if any. */
  findAuthorizationUse(payment: Eip3009Payment): Promise<`0x${string}` | undefined>;
  /**
   * True once the chain itself has passed the authorization's `validBefore` (a block stamped
   * later exists) with the authorization unused at that block: it can never be used now.
   */
  expiredUnused(payment: Eip3009Payment): Promise<boolean>;
}

/** What the chain says of a payment's authorization, independently of any facilitator. */
export type AuthorizationUse =
  | { readonly kind: 'unused' }
  /** Used by a transaction whose receipt shows the payment itself. */
  | { readonly kind: 'paid'; readonly transaction: `0x${string}` }
  /** Used, but the transaction was not found or its receipt does not (yet) show the payment. */
  | { readonly kind: 'unproven'; readonly transaction: `0x${string}` | undefined };

/** True when `transaction` is mined and its receipt shows exactly this payment. */
export async function transactionPaid(
  chain: SettlementChain,
  transaction: `0x${string}`,
  payment: Eip3009Payment,
): Promise<boolean> {
  const receipt = await chain.receipt(transaction);
  return receipt !== undefined && receiptProvesPayment(receipt, payment);
}

/** Whether the authorization was used on chain and, if so, whether that use paid the price. */
export async function authorizationUse(
  chain: SettlementChain,
  payment: Eip3009Payment,
): Promise<AuthorizationUse> {
  if (!(await chain.authorizationUsed(payment))) return { kind: 'unused' };
  const transaction = await chain.findAuthorizationUse(payment);
  if (transaction !== undefined && (await transactionPaid(chain, transaction, payment))) {
    return { kind: 'paid', transaction };
  }
  return { kind: 'unproven', transaction };
}

export class RpcSettlementChain implements SettlementChain {
  private readonly client: PublicClient;

  constructor(rpcUrl: string) {
    this.client = createPublicClient({
      transport: jsonRpcTransport(rpcUrl, { timeoutMs: RPC_TIMEOUT_MS }),
    });
  }

  async receipt(transaction: `0x${string}`): Promise<ReceiptEvidence | undefined> {
    try {
      return await this.client.getTransactionReceipt({ hash: transaction });
    } catch (error) {
      if (error instanceof TransactionReceiptNotFoundError) return undefined;
      throw error;
    }
  }

  authorizationUsed(payment: Eip3009Payment, blockNumber?: bigint): Promise<boolean> {
    return this.client.readContract({
      address: payment.requirement.asset as `0x${string}`,
      abi: EIP3009_STATE_ABI,
      functionName: 'authorizationState',
      args: [payment.authorization.from, payment.authorization.nonce],
      blockNumber,
    });
  }

  async expiredUnused(payment: Eip3009Payment): Promise<boolean> {
    const block = await this.client.getBlock({ blockTag: 'latest' });
    if (block.timestamp < BigInt(payment.authorization.validBefore)) return false;
    return !(await this.authorizationUsed(payment, block.number));
  }

  async findAuthorizationUse(payment: Eip3009Payment): Promise<`0x${string}` | undefined> {
    // not viem's cached block number (4 s): a use in the newest blocks must be found
    const latest = await this.client.getBlockNumber({ cacheTime: 0 });
    const logs = await this.client.getLogs({
      address: payment.requirement.asset as `0x${string}`,
      event: EIP3009_EVENTS[1],
      args: { authorizer: payment.authorization.from, nonce: payment.authorization.nonce },
      fromBlock: latest > LOOKBACK_BLOCKS ? latest - LOOKBACK_BLOCKS : 0n,
      toBlock: latest,
    });
    return logs.at(-1)?.transactionHash ?? undefined;
  }
}
