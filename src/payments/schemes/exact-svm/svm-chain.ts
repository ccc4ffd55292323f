import {
  createSolanaRpc,
  getBase58Encoder,
  getPublicKeyFromAddress,
  verifySignature,
  type Blockhash,
  type Signature,
  type SignatureBytes,
} from '@solana/kit';
import type { AcceptedSvmPayment } from './svm-acceptance.js';

/**
 * What the Solana chain (X402_SOLANA_RPC_URL) says about a payment, never the facilitator's
 * word: whether a signature landed, and whether a blockhash is still recent (a transaction that
 * has not landed by then never will).
 */

/** A settlement signature on chain: landed without error, landed and failed, or not (yet) seen. */
export type SignatureState = 'landed' | 'failed' | 'unseen';

/** A signature's state and, once it is on chain, the slot it landed in. */
export interface SignatureLanding {
  readonly state: SignatureState;
  readonly slot?: bigint;
}

/** Each chain read gets this long. */
const READ_TIMEOUT_MS = 2000;

export class SolanaChainReader {
  private readonly rpc: ReturnType<typeof createSolanaRpc>;

  constructor(rpcUrl: string) {
    this.rpc = createSolanaRpc(rpcUrl);
  }

  /** `confirmed` or `finalized` counts as landed; a read that fails throws. */
  async signatureState(signature: string): Promise<SignatureState> {
    return (await this.signatureLanding(signature)).state;
  }

  /** signatureState, with the slot a landed (or failed) transaction is in. */
  async signatureLanding(signature: string): Promise<SignatureLanding> {
    const { value } = await this.rpc
      .getSignatureStatuses([signature as Signature], { searchTransactionHistory: true })
      .send({ abortSignal: AbortSignal.timeout(READ_TIMEOUT_MS) });
    const status = value[0];
    if (
      status === null ||
      status === undefined ||
      (status.confirmationStatus !== 'confirmed' && status.confirmationStatus !== 'finalized')
    ) {
      return { state: 'unseen' };
    }
    return { state: status.err === null ? 'landed' : 'failed', slot: status.slot };
  }

  /** The latest confirmed slot: a transaction sent after this read lands in a later slot. */
  async confirmedSlot(): Promise<bigint> {
    return await this.rpc
      .getSlot({ commitment: 'confirmed' })
      .send({ abortSignal: AbortSignal.timeout(READ_TIMEOUT_MS) });
  }

  async blockhashValid(blockhash: string): Promise<boolean> {
    const { value } = await this.rpc
      .isBlockhashValid(blockhash as Blockhash, { commitment: 'confirmed' })
      .send({ abortSignal: AbortSignal.timeout(READ_TIMEOUT_MS) });
    return value;
  }
}

/**
 * Whether `signature` (the settlement's transaction id, base58) is the fee payer's signature of
 * exactly the transaction the buyer signed: then its landing is this payment's, and nothing else.
 */
export async function signsThePayment(
  payment: AcceptedSvmPayment,
  signature: string,
): Promise<boolean> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(getBase58Encoder().encode(signature));
  } catch {
    return false;
  }
  if (bytes.length !== 64) return false;
  // (CryptoKey is a DOM type this project's lib does not declare: the key is passed through)
  return getPublicKeyFromAddress(payment.feePayer).then(
    (key: Parameters<typeof verifySignature>[0]) =>
      verifySignature(key, bytes as SignatureBytes, payment.messageBytes),
  );
}
