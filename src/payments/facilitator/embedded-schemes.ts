import type { x402Facilitator } from '@x402/core/facilitator';
import type { DiscoveryService } from '@nestjs/core';
import type { FacilitatorEvmSigner } from '@x402/evm';
import type { PrivateKeyAccount } from 'viem';

/** What the embedded facilitator settles with on one EVM network. */
export interface EmbeddedSettler {
  readonly network: `eip155:${number}`;
  /** The SDK's signer over the network's RPC, its chain calls watched for outages. */
  readonly signer: FacilitatorEvmSigner;
  /** The settlement key's account (X402_SETTLER_PRIVATE_KEY). */
  readonly account: PrivateKeyAccount;
}

/**
 * A scheme's facilitator side: how it registers on the embedded facilitator of one network.
 * Each scheme module provides its own as a value (any token); the facilitators collect every
 * one the app holds (`embeddedSchemesIn`), so this folder names no scheme.
 */
export class EmbeddedFacilitatorScheme {
  constructor(
    /** The x402 scheme id, for logs and tests. */
    readonly scheme: string,
    readonly register: (facilitator: x402Facilitator, settler: EmbeddedSettler) => void,
  ) {}
}

/** Every scheme's facilitator side among the app's providers, in module order. */
export function embeddedSchemesIn(discovery: DiscoveryService): EmbeddedFacilitatorScheme[] {
  // value providers hold their instance from the scan on, before any factory runs
  return discovery
    .getProviders()
    .map((wrapper): unknown => wrapper.instance)
    .filter((instance) => instance instanceof EmbeddedFacilitatorScheme);
}
