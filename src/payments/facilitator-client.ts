import { createFacilitatorConfig } from '@coinbase/x402';
import { x402Facilitator } from '@x402/core/facilitator';
import {
  FacilitatorResponseError,
  HTTPFacilitatorClient,
  type FacilitatorClient,
} from '@x402/core/server';
import { SettleError, VerifyError } from '@x402/core/types';
import type {
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  SupportedResponse,
  VerifyResponse,
} from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { createWalletClient, defineChain, http, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createNonceManager, jsonRpc } from 'viem/nonce';
import type { FacilitatorConfig, PaymentConfig } from '../config/payment-config.js';

/**
 * The facilitator could not be asked (down, unreachable, timing out, answering garbage).
 * Extends the SDK's boundary error so its HTTP server passes it through instead of turning it
 * into a 402; the guard and interceptor answer it with 502/503 and charge nothing.
 */
export class FacilitatorUnavailableError extends FacilitatorResponseError {
  constructor(
    readonly operation: 'verify' | 'settle' | 'supported',
    cause: unknown,
  ) {
    super(
      `facilitator ${operation} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
    this.name = 'FacilitatorUnavailableError';
  }
}

/** Builds the facilitator for X402_FACILITATOR: remote URL, Coinbase CDP, or in-process. */
export function createFacilitatorClient(payments: PaymentConfig): FacilitatorClient {
  return new GuardedFacilitatorClient(facilitatorFor(payments.facilitator, payments.network));
}

function facilitatorFor(
  config: FacilitatorConfig,
  network: PaymentConfig['network'],
): FacilitatorClient {
  switch (config.mode) {
    case 'remote':
      return new HTTPFacilitatorClient({ url: config.url, timeoutMs: config.timeoutMs });
    case 'cdp':
      return new HTTPFacilitatorClient({
        ...createFacilitatorConfig(config.apiKeyId, config.apiKeySecret),
        timeoutMs: config.timeoutMs,
      });
    case 'embedded':
      return new EmbeddedFacilitatorClient(config.settlerPrivateKey, config.rpcUrl, network);
  }
}

/** Settlement receipts are polled for; the 4 s default would stall every local settlement. */
const RECEIPT_POLLING_MS = 50;

/**
 * The `@x402/evm` facilitator in this process, settling on chain with its own key. One
 * nonce manager per key, so concurrent settlements do not collide on the account nonce.
 */
export class EmbeddedFacilitatorClient implements FacilitatorClient {
  private readonly facilitator = new x402Facilitator();

  constructor(settlerPrivateKey: `0x${string}`, rpcUrl: string, network: PaymentConfig['network']) {
    const chainId = Number(network.split(':')[1]);
    const account = privateKeyToAccount(settlerPrivateKey, {
      nonceManager: createNonceManager({ source: jsonRpc() }),
    });
    const chain = defineChain({
      id: chainId,
      name: network,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [rpcUrl] } },
    });
    const client = createWalletClient({
      account,
      chain,
      transport: http(rpcUrl, { timeout: 10_000, retryCount: 0 }),
      pollingInterval: RECEIPT_POLLING_MS,
    }).extend(publicActions);
    type Client = typeof client;
    // viem's verifyTypedData parameters are a wider union than the signer interface accepts.
    const signer = toFacilitatorEvmSigner({
      address: account.address,
      readContract: (args) => client.readContract(args),
      verifyTypedData: (args) =>
        client.verifyTypedData(args as Parameters<Client['verifyTypedData']>[0]),
      writeContract: (args) => client.writeContract(args),
      sendTransaction: (args) => client.sendTransaction(args),
      waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args),
      getCode: (args) => client.getCode(args),
    });
    registerExactEvmScheme(this.facilitator, { signer, networks: network });
  }

  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    return this.facilitator.verify(payload, requirements);
  }

  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    return this.facilitator.settle(payload, requirements);
  }

  getSupported(): Promise<SupportedResponse> {
    return Promise.resolve(this.facilitator.getSupported() as SupportedResponse);
  }
}

/**
 * Turns every failure to reach the facilitator into FacilitatorUnavailableError; a verdict it
 * sent back as an error status (VerifyError, SettleError) stays a verdict.
 */
class GuardedFacilitatorClient implements FacilitatorClient {
  constructor(private readonly inner: FacilitatorClient) {}

  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    return guarded('verify', () => this.inner.verify(payload, requirements));
  }

  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    return guarded('settle', () => this.inner.settle(payload, requirements));
  }

  getSupported(): Promise<SupportedResponse> {
    return guarded('supported', () => this.inner.getSupported());
  }
}

async function guarded<T>(
  operation: FacilitatorUnavailableError['operation'],
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof FacilitatorUnavailableError) throw error;
    if (error instanceof VerifyError || error instanceof SettleError) throw error;
    throw new FacilitatorUnavailableError(operation, error);
  }
}
