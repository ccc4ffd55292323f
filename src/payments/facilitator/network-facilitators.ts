import type { FacilitatorClient } from '@x402/core/server';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentConfig } from '../payments.settings.js';
import { EmbeddedFacilitatorClient } from './embedded-facilitator.js';
import type { EmbeddedFacilitatorScheme } from './embedded-schemes.js';
import { HttpFacilitatorGuard } from './facilitator-client.js';
import { SolanaFacilitatorClient } from './solana-facilitator.js';

/** The NetworkFacilitators of this service (one facilitator client per network). */
export const FACILITATORS = Symbol('Facilitators');

/** Each network's facilitator; networks may share one (a remote URL, CDP). */
export class NetworkFacilitators {
  constructor(private readonly byNetwork: ReadonlyMap<string, FacilitatorClient>) {}

  /** The facilitator of a configured network. */
  of(network: string): FacilitatorClient {
    const client = this.byNetwork.get(network);
    if (client === undefined)
      throw new Error(`no facilitator for ${network}: not among X402_NETWORKS`);
    return client;
  }

  /**
   * Every distinct facilitator, those serving one network before those shared by several: the
   * x402 server takes each (network, scheme) from the first facilitator that lists it, and a
   * network with a facilitator of its own must be served by that one, even where a shared one
   * lists the network too.
   */
  all(): FacilitatorClient[] {
    const served = new Map<FacilitatorClient, number>();
    for (const client of this.byNetwork.values()) served.set(client, (served.get(client) ?? 0) + 1);
    return [...served.keys()].sort((a, b) => (served.get(a) ?? 0) - (served.get(b) ?? 0));
  }

  /** The in-process facilitators read their settling account's nonce from the chain again. */
  forgetSettlerNonces(): void {
    for (const client of this.byNetwork.values())
      if (client instanceof EmbeddedFacilitatorClient) client.forgetNonce();
  }
}

/**
 * The facilitator of each network for X402_FACILITATOR: the remote URL (or the network's own,
 * X402_FACILITATOR_URL_<CHAIN ID>), Coinbase CDP, or in-process on the network's chain, settling
 * the `schemes` given (each scheme module's side of the embedded facilitator).
 */
export async function createFacilitators(
  payments: PaymentConfig,
  schemes: readonly EmbeddedFacilitatorScheme[],
): Promise<NetworkFacilitators> {
  const config = payments.facilitator;
  const byNetwork = new Map<string, FacilitatorClient>();
  let shared: FacilitatorClient | undefined;
  for (const { network, rpcUrl, facilitatorUrl } of payments.networks) {
    switch (config.mode) {
      case 'remote':
        byNetwork.set(
          network,
          facilitatorUrl === undefined
            ? (shared ??= remoteFacilitator(config.url, config.timeoutMs))
            : remoteFacilitator(facilitatorUrl, config.timeoutMs),
        );
        break;
      case 'cdp': {
        // Loaded only here: the Coinbase SDK behind it weighs tens of MB that no other mode uses.
        const { createFacilitatorConfig } = await import('@coinbase/x402');
        shared ??= new HttpFacilitatorGuard(
          new HTTPFacilitatorClient({
            ...createFacilitatorConfig(config.apiKeyId, config.apiKeySecret),
            timeoutMs: config.timeoutMs,
          }),
        );
        byNetwork.set(network, shared);
        break;
      }
      case 'embedded':
        if (rpcUrl === undefined)
          throw new Error(`${network} has no RPC for the embedded facilitator`);
        byNetwork.set(
          network,
          new EmbeddedFacilitatorClient(config.settlerPrivateKey, rpcUrl, network, schemes, {
            receiptMaxWaitMs: config.receiptMaxWaitMs,
            receiptTimeoutMs: config.receiptTimeoutMs,
          }),
        );
        break;
    }
  }
  const solana = payments.solana;
  if (solana !== undefined) {
    const networks = solana.networks.map(({ network }) => network);
    let solanaFacilitator: FacilitatorClient;
    if (config.mode === 'embedded') {
      // parsePaymentConfig requires both in embedded mode
      if (solana.feePayerKey === undefined || solana.rpcUrl === undefined) {
        throw new Error('Solana has no fee payer or RPC for the embedded facilitator');
      }
      solanaFacilitator = await SolanaFacilitatorClient.create(
        solana.feePayerKey,
        solana.rpcUrl,
        networks,
        payments.settleTimeoutMs,
      );
    } else {
      // the remote (X402_FACILITATOR_URL) or CDP facilitator does Solana too (x402.org: devnet);
      // in CDP mode the EVM networks' client is made already
      if (config.mode === 'remote') shared ??= remoteFacilitator(config.url, config.timeoutMs);
      if (shared === undefined) throw new Error('no remote facilitator to sell on Solana with');
      solanaFacilitator = shared;
    }
    for (const network of networks) byNetwork.set(network, solanaFacilitator);
  }
  return new NetworkFacilitators(byNetwork);
}

function remoteFacilitator(url: string, timeoutMs: number): FacilitatorClient {
  return new HttpFacilitatorGuard(new HTTPFacilitatorClient({ url, timeoutMs }));
}
