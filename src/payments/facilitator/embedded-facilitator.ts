import { AsyncLocalStorage } from 'node:async_hooks';
import { x402Facilitator } from '@x402/core/facilitator';
import type { FacilitatorClient } from '@x402/core/server';
import type {
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  SupportedResponse,
  VerifyResponse,
} from '@x402/core/types';
import { eip3009ABI, toFacilitatorEvmSigner } from '@x402/evm';
import {
  BaseError,
  HttpRequestError,
  TimeoutError,
  createWalletClient,
  defineChain,
  encodeFunctionData,
  publicActions,
  type Hex,
} from 'viem';
import { AccountNonces } from '../../chain/account-nonces.js';
import { withGasHeadroom } from '../../chain/gas-headroom.js';
import { jsonRpcTransport } from '../../chain/json-rpc-transport.js';
import { ReceiptPacing, pollReceipt } from '../../chain/receipt-wait.js';
import {
  transferWithAuthorizationArgs,
  type Eip3009Authorization,
} from '../../chain/eip3009-authorization.js';
import {
  FacilitatorUnavailableError,
  settlementTraces,
  traceReceipt,
  traceSend,
  traceTransaction,
  type Operation,
} from './facilitator-client.js';
import type { EmbeddedFacilitatorScheme } from './embedded-schemes.js';
import { nativeSigningAccount } from './native-account.js';

/** One facilitator operation in progress: its first unanswered chain call, its memoized reads. */
interface OperationState {
  failure?: unknown;
  reads?: Map<string, Promise<unknown>>;
}

/** A chain call that never got an answer, as opposed to one the chain answered with an error. */
function isTransportFailure(error: unknown): boolean {
  return (
    error instanceof BaseError &&
    error.walk((inner) => inner instanceof HttpRequestError || inner instanceof TimeoutError) !==
      null
  );
}

/**
 * The `@x402/evm` facilitator in this process, settling on chain with its own key. Its
 * transaction nonces are counted here (AccountNonces: one chain read, then one more after a
 * failed send or a change of the settler lease), so concurrent settlements do not collide and
 * a send asks the chain for no nonce. That
 * facilitator turns every failed chain call into a verdict ("invalid signature" when the RPC is
 * down), so chain calls are watched per operation and an unanswered one is reported as an outage.
 */
export class EmbeddedFacilitatorClient implements FacilitatorClient {
  private readonly facilitator = new x402Facilitator();
  private readonly transport = new AsyncLocalStorage<OperationState>();
  /** An `eth_call` from the settling account. */
  private readonly callAsSettler: (to: Hex, data: Hex) => Promise<unknown>;
  /** The settling account's next transaction nonces. */
  private readonly nonces: AccountNonces;

  /**
   * `schemes`: what it settles, each scheme's facilitator side (see EmbeddedFacilitatorScheme);
   * `receiptMaxWaitMs`: the longest wait between two asks for a settlement's receipt (default:
   * a quarter of the chain's measured block time; viem's fixed 4 s stalls local chains);
   * `receiptTimeoutMs`: how long it is waited for at most (viem's default is minutes, long
   * after every client gave up).
   */
  constructor(
    settlerPrivateKey: `0x${string}`,
    rpcUrl: string,
    network: `eip155:${number}`,
    schemes: readonly EmbeddedFacilitatorScheme[],
    {
      receiptMaxWaitMs,
      receiptTimeoutMs = 15_000,
    }: { receiptMaxWaitMs?: number | undefined; receiptTimeoutMs?: number } = {},
  ) {
    const chainId = Number(network.split(':')[1]);
    const account = nativeSigningAccount(settlerPrivateKey);
    const chain = defineChain({
      id: chainId,
      name: network,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [rpcUrl] } },
    });
    const client = createWalletClient({
      account,
      chain,
      transport: jsonRpcTransport(rpcUrl, { timeoutMs: 10_000, onRequest: traceSend }),
      pollingInterval: receiptMaxWaitMs ?? 250,
    }).extend(publicActions);
    type Client = typeof client;
    this.callAsSettler = (to, data) => client.call({ account, to, data });
    const nonces = new AccountNonces(() =>
      client.getTransactionCount({ address: account.address, blockTag: 'pending' }),
    );
    this.nonces = nonces;
    const fees = new RecentFees(() => client.estimateFeesPerGas());
    const pacing = new ReceiptPacing(() => blockTimeMs(client), receiptMaxWaitMs);
    const waitAfter = (attempt: number): number => pacing.waitAfter(attempt);
    const watch = <T>(call: () => Promise<T>): Promise<T> => this.watched(call);
    // viem's verifyTypedData parameters are a wider union than the signer interface accepts.
    const signer = toFacilitatorEvmSigner({
      address: account.address,
      readContract: (args) => watch(() => client.readContract(args)),
      verifyTypedData: (args) =>
        watch(() => client.verifyTypedData(args as Parameters<Client['verifyTypedData']>[0])),
      // The gas is estimated per transaction: a deposit's or transfer's cost depends on the
      // payer (a contract wallet's signature check) and on storage the call touches first.
      // The nonce is taken last, once the estimate passed, so a refused call uses none.
      writeContract: (args) =>
        watch(() =>
          nonces.sending((takeNonce) =>
            traceTransaction(
              async () => {
                const price = await fees.current();
                const gas = await client.estimateContractGas({ ...args, ...price, prepare: false });
                return { ...price, gas: withGasHeadroom(gas), chainId, nonce: await takeNonce() };
              },
              (prepared) => client.writeContract({ ...args, ...prepared }),
            ),
          ),
        ),
      sendTransaction: (args) =>
        watch(() =>
          nonces.sending((takeNonce) =>
            traceTransaction(
              async () => {
                const price = await fees.current();
                const gas = await client.estimateGas({ ...args, ...price, prepare: false });
                return { ...price, gas: withGasHeadroom(gas), chainId, nonce: await takeNonce() };
              },
              (prepared) => client.sendTransaction({ ...args, ...prepared }),
            ),
          ),
        ),
      waitForTransactionReceipt: (args) =>
        watch(() =>
          traceReceipt(() =>
            pollReceipt(
              (hash) => client.getTransactionReceipt({ hash }),
              args.hash,
              waitAfter,
              receiptTimeoutMs,
            ),
          ),
        ),
      // The SDK starts this check early and may never await it: a rejection here would be
      // unhandled and end the process, so a failure is recorded as an outage instead. Its
      // signature check asks twice for the payer's code within one operation: asked once.
      getCode: (args) =>
        this.watchedWithout(() => this.onceInOperation(args.address, () => client.getCode(args))),
    });
    for (const { register } of schemes) register(this.facilitator, { network, signer, account });
  }

  /**
   * The next transaction reads the settling account's nonce from the chain again: for when
   * another instance may have sent with this key (the settler lease changed hands).
   */
  forgetNonce(): void {
    this.nonces.forget();
  }

  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    return this.reportingOutages('verify', () => this.facilitator.verify(payload, requirements));
  }

  /**
   * Whether the token would execute this EIP-3009 transfer now, sent by the settling account
   * (one `eth_call`: balance, an unused nonce, the validity window and the token's own signature
   * check, contract payers included): false when it reverts, undefined when the chain did not
   * answer.
   */
  async wouldTransfer(
    asset: Hex,
    authorization: Eip3009Authorization,
    signature: Hex,
  ): Promise<boolean | undefined> {
    try {
      await this.callAsSettler(
        asset,
        encodeFunctionData({
          abi: eip3009ABI,
          functionName: 'transferWithAuthorization',
          args: transferWithAuthorizationArgs(authorization, signature),
        }),
      );
      return true;
    } catch (error) {
      return isTransportFailure(error) ? undefined : false;
    }
  }

  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    const trace = settlementTraces.getStore();
    if (trace !== undefined) trace.observed = true;
    return this.reportingOutages('settle', () => this.facilitator.settle(payload, requirements));
  }

  getSupported(): Promise<SupportedResponse> {
    return Promise.resolve(this.facilitator.getSupported() as SupportedResponse);
  }

  /** Runs a facilitator operation; if any chain call in it went unanswered, that is an outage. */
  private async reportingOutages<T>(operation: Operation, run: () => Promise<T>): Promise<T> {
    const watched: OperationState = {};
    const result = await this.transport.run(watched, run);
    if (watched.failure !== undefined)
      throw new FacilitatorUnavailableError(operation, watched.failure);
    return result;
  }

  /** `read`, or what it gave for `key` earlier in the same operation (verify or settle). */
  private onceInOperation<T>(key: string, read: () => Promise<T>): Promise<T> {
    const operation = this.transport.getStore();
    if (operation === undefined) return read();
    operation.reads ??= new Map();
    const known = operation.reads.get(key.toLowerCase()) as Promise<T> | undefined;
    if (known !== undefined) return known;
    const reading = read();
    operation.reads.set(key.toLowerCase(), reading);
    return reading;
  }

  private async watchedWithout<T>(call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await call();
    } catch (error) {
      const watched = this.transport.getStore();
      if (watched !== undefined) watched.failure ??= error;
      return undefined;
    }
  }

  private async watched<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      const watched = this.transport.getStore();
      if (watched !== undefined && isTransportFailure(error)) watched.failure ??= error;
      throw error;
    }
  }
}

/** How long a fee estimate is reused: under a block on Base; viem's 1.2x base-fee margin covers one block's rise. */
const FEES_TTL_MS = 1000;

/** The chain's current fees per gas, asked at most once a second (concurrent askers share one ask). */
class RecentFees<T> {
  private cached: { readonly at: number; readonly fees: Promise<T> } | undefined;

  constructor(private readonly estimate: () => Promise<T>) {}

  current(): Promise<T> {
    const now = Date.now();
    if (this.cached === undefined || now - this.cached.at > FEES_TTL_MS) {
      const fees = this.estimate();
      this.cached = { at: now, fees };
      fees.catch(() => {
        if (this.cached?.fees === fees) this.cached = undefined;
      });
    }
    return this.cached.fees;
  }
}

/** How many recent blocks the block time is averaged over. */
const BLOCK_TIME_SAMPLE = 20n;

/** The average interval of the chain's recent blocks in ms; undefined while it has too few. */
async function blockTimeMs(client: {
  getBlock(args: { blockTag: 'latest' } | { blockNumber: bigint }): Promise<{
    number: bigint | null;
    timestamp: bigint;
  }>;
}): Promise<number | undefined> {
  const latest = await client.getBlock({ blockTag: 'latest' });
  if (latest.number === null || latest.number < 2n) return undefined;
  const span = latest.number < BLOCK_TIME_SAMPLE ? latest.number : BLOCK_TIME_SAMPLE;
  const earlier = await client.getBlock({ blockNumber: latest.number - span });
  return (Number(latest.timestamp - earlier.timestamp) * 1000) / Number(span);
}
