import type { Network } from '@x402/core/types';
import type { PaymentConfig } from '../payments.settings.js';

/**
 * Every network a paid route is offered on, whatever its family: X402_NETWORKS's EVM networks,
 * then its Solana ones, each with who receives there and the token it is paid in.
 */

/** One network as an offer names it. */
export interface SoldNetwork {
  readonly network: Network;
  /** The receiving address on this network (X402_PAY_TO, X402_PAY_TO_SOLANA). */
  readonly payTo: string;
  /** The token (an EVM contract, an SPL mint). */
  readonly asset: string;
  readonly decimals: number;
  /** What a buyer's client needs besides (an EIP-712 domain's name and version). */
  readonly extra: Record<string, unknown>;
}

export function soldNetworks(payments: PaymentConfig): SoldNetwork[] {
  const evm = payments.networks.map(({ network, asset }) => ({
    network,
    payTo: payments.payTo,
    asset: asset.address,
    decimals: asset.decimals,
    extra: { name: asset.name, version: asset.version },
  }));
  const solana = payments.solana;
  if (solana === undefined) return evm;
  return [
    ...evm,
    ...solana.networks.map(({ network, mint, decimals }) => ({
      network,
      payTo: solana.payTo,
      asset: mint,
      decimals,
      extra: {},
    })),
  ];
}
