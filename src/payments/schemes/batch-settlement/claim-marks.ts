import type { Channel, ChannelStorage } from '@x402/evm/batch-settlement/server';

/**
 * A claim round marks each channel it claims in the channel's own record (the store every
 * instance shares) before its claim transaction, and clears the mark after: a stream's take-back
 * on any instance then never lowers the charged total under what a claim in flight may put on
 * chain. A mark lapses after CLAIM_MARK_MS, so a round that died with its process holds nothing
 * for long.
 */
export const CLAIM_MARK_MS = 10 * 60 * 1000;

/** One claim round's mark: the charged total it claims, until when the mark holds. */
export interface ClaimMark {
  readonly by: string;
  readonly upTo: string;
  readonly until: number;
}

type MarkedChannel = Channel & { claiming?: readonly ClaimMark[] };

function marksOf(channel: Channel, now: number): ClaimMark[] {
  const marks: unknown = (channel as MarkedChannel).claiming;
  if (!Array.isArray(marks)) return [];
  return (marks as ClaimMark[]).filter((mark) => mark.until > now);
}

/** The least the charged total may go down to: the claimed total, or what a live claim claims. */
export function claimFloorOf(channel: Channel, now: number): bigint {
  return marksOf(channel, now).reduce(
    (floor, mark) => (BigInt(mark.upTo) > floor ? BigInt(mark.upTo) : floor),
    BigInt(channel.totalClaimed),
  );
}

/**
 * Marks the channel as claimed up to its charged total by round `by`, in one atomic write, and
 * returns the record as written (what the round must claim, not a later read), or undefined
 * when the record is gone.
 */
export async function markClaiming(
  storage: ChannelStorage,
  channelId: string,
  by: string,
  now: number,
): Promise<Channel | undefined> {
  let marked: Channel | undefined;
  await storage.updateChannel(channelId, (current) => {
    if (current === undefined) {
      marked = undefined;
      return current;
    }
    const mark = { by, upTo: current.chargedCumulativeAmount, until: now + CLAIM_MARK_MS };
    const next: MarkedChannel = {
      ...current,
      claiming: [...marksOf(current, now).filter((m) => m.by !== by), mark],
    };
    marked = next;
    return next;
  });
  return marked;
}

/** Clears round `by`'s mark on the channel (its claim landed or failed). */
export async function clearClaiming(
  storage: ChannelStorage,
  channelId: string,
  by: string,
  now: number,
): Promise<void> {
  await storage.updateChannel(channelId, (current) => {
    if (current === undefined || (current as MarkedChannel).claiming === undefined) return current;
    const left = marksOf(current, now).filter((mark) => mark.by !== by);
    const next: MarkedChannel = { ...current, claiming: left.length === 0 ? undefined : left };
    return next;
  });
}
