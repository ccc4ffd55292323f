import {
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  getBase58Decoder,
  getBase64Encoder,
  getTransactionDecoder,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { x402Facilitator } from '@x402/core/facilitator';
import type { FacilitatorClient } from '@x402/core/server';
import type {
  Network,
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  SupportedResponse,
  VerifyResponse,
} from '@x402/core/types';
import {
  TransactionOnchainFailureError,
  toFacilitatorSvmSigner,
  type FacilitatorSvmSigner,
} from '@x402/svm';
import { ExactSvmScheme } from '@x402/svm/exact/facilitator';
import { FacilitatorUnavailableError } from './facilitator-client.js';

/**
 * The most compute units a payment may ask for: the fee payer pays for every unit asked, used or
 * not. A transfer with a memo uses ~20,000 (what the SDK's client asks); this leaves headroom.
 */
export const MAX_COMPUTE_UNIT_LIMIT = 40_000;
/**
 * The highest compute-unit price (micro-lamports per unit) a payment may set: the fee payer pays
 * it. The SDK's client sets 1; at the cap, MAX_COMPUTE_UNIT_LIMIT units cost 2,000 lamports.
 */
export const MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS = 50_000;

/**
 * The `@x402/svm` facilitator in this process: the fee payer (X402_SOLANA_FEE_PAYER_KEY) signs
 * each buyer's transfer transaction as its fee payer and submits it to X402_SOLANA_RPC_URL. A
 * submission not confirmed within the settlement deadline is answered `settlement_pending` with
 * its signature (the SDK's own path), which the seller reconciles by that signature. A refusal
 * because the simulation could not run while the RPC does not answer is an outage (503), not a 402.
 */

/** The SDK's reason when sending (or signing) failed; it exports no constant for it. */
const SEND_FAILED = 'invalid_exact_svm_transaction_failed';
/** The SDK's reason for a transaction sent but not confirmed in time. */
const PENDING = 'settlement_pending';

/** How often a submitted transaction's status is asked while it is awaited. */
const CONFIRM_POLL_MS = 100;

export class SolanaFacilitatorClient implements FacilitatorClient {
  private constructor(
    private readonly facilitator: x402Facilitator,
    private readonly rpc: ReturnType<typeof createSolanaRpc>,
    private readonly feePayer: KeyPairSigner,
  ) {}

  /** `confirmTimeoutMs`: how long a submitted transaction is awaited (the SDK's is 30 s). */
  static async create(
    feePayerKey: Uint8Array,
    rpcUrl: string,
    networks: readonly Network[],
    confirmTimeoutMs: number,
  ): Promise<SolanaFacilitatorClient> {
    const feePayer = await createKeyPairSignerFromBytes(feePayerKey);
    const rpc = createSolanaRpc(rpcUrl);
    const sdkSigner = toFacilitatorSvmSigner(feePayer, { defaultRpcUrl: rpcUrl });
    const signer: FacilitatorSvmSigner = {
      ...sdkSigner,
      confirmTransaction: (signature) => confirmWithin(rpc, signature, confirmTimeoutMs),
    };
    const facilitator = new x402Facilitator();
    // the fee payer pays for what the buyer's transaction asks: the SDK's own caps as well
    // (its defaults: no compute-unit cap, 5,000,000 micro-lamports per unit)
    const scheme = new ExactSvmScheme(signer, undefined, {
      maxComputeUnits: MAX_COMPUTE_UNIT_LIMIT,
      maxPriorityFeeMicroLamports: MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS,
      maxRequiredSignatures: 2,
    });
    facilitator.register([...networks], scheme);
    return new SolanaFacilitatorClient(facilitator, rpc, feePayer);
  }

  async verify(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
  ): Promise<VerifyResponse> {
    const verdict = await this.facilitator.verify(payload, requirements);
    if (
      !verdict.isValid &&
      (verdict.invalidReason ?? '').includes('simulation_failed') &&
      !(await this.rpcAnswers())
    ) {
      throw new FacilitatorUnavailableError('verify', new Error('the Solana RPC does not answer'));
    }
    return verdict;
  }

  /**
   * The SDK's settlement; when sending failed (SEND_FAILED naming no transaction) the
   * RPC may still have taken it, so it is named (the fee payer's signature is deterministic) and
   * called pending: the seller then learns from the chain whether it landed.
   */
  async settle(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
  ): Promise<SettleResponse> {
    const result = await this.facilitator.settle(payload, requirements);
    if (result.success || result.transaction !== '' || result.errorReason !== SEND_FAILED) {
      return result;
    }
    const transaction = await this.feePayerSignature(payload);
    if (transaction === undefined) return result;
    return { ...result, errorReason: PENDING, transaction };
  }

  getSupported(): Promise<SupportedResponse> {
    return Promise.resolve(this.facilitator.getSupported() as SupportedResponse);
  }

  /** The transaction's id: the fee payer's signature of the buyer's message. */
  private async feePayerSignature(payload: PaymentPayload): Promise<string | undefined> {
    const transaction: unknown = payload.payload['transaction'];
    if (typeof transaction !== 'string') return undefined;
    try {
      const { messageBytes } = getTransactionDecoder().decode(
        getBase64Encoder().encode(transaction),
      );
      const [signed] = await this.feePayer.signMessages([
        { content: new Uint8Array(messageBytes), signatures: {} },
      ]);
      const signature = signed?.[this.feePayer.address];
      if (signature === undefined) return undefined;
      return getBase58Decoder().decode(signature);
    } catch {
      return undefined;
    }
  }

  private async rpcAnswers(): Promise<boolean> {
    try {
      await this.rpc.getSlot().send({ abortSignal: AbortSignal.timeout(1000) });
      return true;
    } catch {
      return false;
    }
  }
}

/** Waits for `confirmed` (or `finalized`); a failure on chain or no confirmation in time throws. */
async function confirmWithin(
  rpc: ReturnType<typeof createSolanaRpc>,
  signature: string,
  timeoutMs: number,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const status = await rpc
      .getSignatureStatuses([signature as Signature])
      .send({ abortSignal: AbortSignal.timeout(Math.max(1, until - Date.now())) })
      .then(({ value }) => value[0])
      .catch(() => null);
    if (status?.confirmationStatus === 'confirmed' || status?.confirmationStatus === 'finalized') {
      if (status.err !== null) {
        throw new TransactionOnchainFailureError(`transaction failed on chain: ${signature}`);
      }
      return;
    }
    if (Date.now() + CONFIRM_POLL_MS >= until) {
      throw new Error(`not confirmed within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, CONFIRM_POLL_MS));
  }
}
