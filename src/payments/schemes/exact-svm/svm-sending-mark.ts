import { ApiError, ErrorCode } from '../../../common/api-error.js';
import type { SignatureState, SolanaChainReader } from './svm-chain.js';

/** A settlement signature's state, with a landing before this request sent it set apart. */
export type SaleLandingState = SignatureState | 'landed_earlier';

/** The mark each sale's settlement was sent after, for the record of a sale left unknown. */
const marks = new WeakMap<object, bigint>();

/**
 * The chain's confirmed slot read just before a request sends its Solana transaction. The
 * settlement's id is the fee payer's signature, which is deterministic: the chain showing it
 * landed does not say that this request landed it. A landing at or before the mark happened
 * before this request sent anything (by this service before a restart, or by an instance with a
 * ledger of its own) and sells nothing now.
 */
export class SvmSendingMark {
  private constructor(
    private readonly chain: SolanaChainReader,
    readonly slot: bigint,
  ) {}

  /**
   * Reads the mark for `sale` before anything is sent; a chain that cannot be read now is a 503
   * after `giveBack` (nothing was sent, nothing charged). No chain (no RPC): no mark, and the
   * facilitator's word is taken.
   */
  static async read(
    chain: SolanaChainReader | undefined,
    sale: object,
    giveBack: () => Promise<void>,
  ): Promise<SvmSendingMark | undefined> {
    if (chain === undefined) return undefined;
    let slot: bigint;
    try {
      slot = await chain.confirmedSlot();
    } catch {
      await giveBack();
      throw new ApiError(
        ErrorCode.ChainUnavailable,
        'The Solana chain cannot be read right now; the payment was not sent and nothing was charged.',
        { 'retry-after': '5' },
      );
    }
    marks.set(sale, slot);
    return new SvmSendingMark(chain, slot);
  }

  /** `signature`'s state on chain, `landed_earlier` when it landed at or before the mark. */
  stateOf(signature: string): Promise<SaleLandingState> {
    return landingState(this.chain, signature, this.slot);
  }
}

/** `signature`'s state, `landed_earlier` when it landed at or before `sentAfterSlot`. */
export async function landingState(
  chain: SolanaChainReader,
  signature: string,
  sentAfterSlot: bigint | string | undefined,
): Promise<SaleLandingState> {
  const { state, slot } = await chain.signatureLanding(signature);
  if (state !== 'landed' || sentAfterSlot === undefined || slot === undefined) return state;
  return slot <= BigInt(sentAfterSlot) ? 'landed_earlier' : 'landed';
}

/** The record field of the mark `sale`'s settlement was sent after, if one was read. */
export function sentAfterSlotOf(sale: object): { sentAfterSlot?: string } {
  const slot = marks.get(sale);
  return slot === undefined ? {} : { sentAfterSlot: slot.toString() };
}

/** Why a transaction that landed before this request sent it buys nothing (a 402's `error`). */
export function landedEarlierReason(signature: string): string {
  return (
    `payment_already_used: transaction ${signature} had landed before this request sent it; ` +
    'it paid for an earlier request'
  );
}
