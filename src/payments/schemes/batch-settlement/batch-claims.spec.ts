import {
  InMemoryChannelStorage,
  type BatchSettlementChannelManager,
  type Channel,
  type ClaimOptions,
} from '@x402/evm/batch-settlement/server';
import { BatchClaims } from './batch-claims.js';
import { claimFloorOf } from './claim-marks.js';
import { FacilitatorUnavailableError } from '../../facilitator/facilitator-client.js';

const idOf = (n: number): string => `0x${n.toString(16).padStart(64, '0')}`;

function record(n: number): Channel {
  return {
    channelId: idOf(n),
    channelConfig: {} as Channel['channelConfig'],
    chargedCumulativeAmount: '2000',
    signedMaxClaimable: '2000',
    signature: '0x',
    balance: '20000',
    totalClaimed: '0',
    withdrawRequestedAt: 0,
    refundNonce: 0,
    lastRequestTimestamp: 0,
  };
}

/** A channel manager whose claim transaction reverts when it holds a refused channel. */
class FakeManager {
  readonly transactions: string[][] = [];
  /** The records the round handed the claim, and the store's records as the claim ran. */
  readonly claimedRecords: Channel[] = [];
  readonly seenDuringClaim: (Channel | undefined)[] = [];
  refused = new Set<string>();
  outage = false;
  partial = false;

  constructor(private readonly storage: InMemoryChannelStorage) {}

  async claim(options?: ClaimOptions): Promise<{ vouchers: number; transaction: string }[]> {
    const all = await this.storage.list();
    const selected = await (options?.selectClaimChannels?.(all, {} as never) ?? all);
    this.claimedRecords.push(...selected);
    this.seenDuringClaim.push(
      ...(await Promise.all(selected.map((c) => this.storage.get(c.channelId)))),
    );
    const rows = selected.filter((c) => BigInt(c.chargedCumulativeAmount) > BigInt(c.totalClaimed));
    if (rows.length === 0) return [];
    if (this.outage) throw new FacilitatorUnavailableError('settle', new Error('ECONNREFUSED'));
    this.transactions.push(rows.map((row) => row.channelId));
    if (this.partial && rows.some((row) => this.refused.has(row.channelId))) {
      // the SDK claims 100 rows per transaction: the batches before the refused one land
      this.partial = false;
      for (const row of rows.filter((r) => !this.refused.has(r.channelId))) {
        await this.storage.updateChannel(row.channelId, (c) =>
          c === undefined ? c : { ...c, totalClaimed: c.chargedCumulativeAmount },
        );
      }
      throw new Error('Claim failed: claim_simulation_failed — the contract function reverted');
    }
    if (rows.some((row) => this.refused.has(row.channelId))) {
      throw new Error('Claim failed: claim_simulation_failed — the contract function reverted');
    }
    for (const row of rows) {
      await this.storage.updateChannel(row.channelId, (c) =>
        c === undefined ? c : { ...c, totalClaimed: c.chargedCumulativeAmount },
      );
    }
    return [{ vouchers: rows.length, transaction: `0x${'ab'.repeat(32)}` }];
  }

  settle(): Promise<{ transaction: string }> {
    return Promise.resolve({ transaction: `0x${'cd'.repeat(32)}` });
  }
}

describe('BatchClaims', () => {
  let storage: InMemoryChannelStorage;
  let manager: FakeManager;
  let claims: BatchClaims;

  beforeEach(async () => {
    storage = new InMemoryChannelStorage();
    for (let n = 1; n <= 16; n += 1) await storage.updateChannel(idOf(n), () => record(n));
    manager = new FakeManager(storage);
    claims = new BatchClaims(manager as unknown as BatchSettlementChannelManager, storage, {
      intervalMs: 60_000,
      threshold: 0n,
    });
  });

  it('marks each channel in its record with what it claims before the claim, and clears it after', async () => {
    const round = await claims.claimAndSettle();
    expect(round.vouchers).toBe(16);
    // the claim got the records as marked, and the store held the marks while it ran
    expect(manager.claimedRecords).toHaveLength(16);
    for (const seen of manager.seenDuringClaim) {
      expect(claimFloorOf(seen!, Date.now())).toBe(2000n);
    }
    for (const channel of await storage.list()) {
      expect((channel as { claiming?: unknown }).claiming).toBeUndefined();
      expect(channel.totalClaimed).toBe('2000');
    }
  });

  it('clears its marks when the claim fails', async () => {
    manager.outage = true;
    await expect(claims.claimAndSettle()).rejects.toThrow();
    for (const channel of await storage.list()) {
      expect(claimFloorOf(channel, Date.now())).toBe(0n);
    }
    manager.outage = false;
    expect(await claims.claimAndSettle()).toMatchObject({ vouchers: 16 });
  });

  it('claims every other channel when one is refused, in a few transactions, and sets that one aside', async () => {
    manager.refused.add(idOf(11));
    const round = await claims.claimAndSettle();
    expect(round).toMatchObject({ vouchers: 15, parked: [idOf(11)] });
    expect(round.settled).toBeDefined();
    // 1 refused batch, then halves: far fewer than one transaction per channel
    expect(manager.transactions.length).toBeLessThanOrEqual(1 + 2 * Math.log2(16) + 1);
    const unclaimed = (await storage.list()).filter((c) => c.totalClaimed === '0');
    expect(unclaimed.map((c) => c.channelId)).toEqual([idOf(11)]);

    manager.transactions.length = 0;
    expect(await claims.claimAndSettle()).toMatchObject({ vouchers: 0, parked: [] });
    expect(manager.transactions).toEqual([]);
    expect(claims.isParked(idOf(11))).toBe(true);
  });

  it('sets nothing aside when the facilitator does not answer: the round fails and the next one retries', async () => {
    manager.outage = true;
    await expect(claims.claimAndSettle()).rejects.toThrow(FacilitatorUnavailableError);
    expect([...Array(16).keys()].some((n) => claims.isParked(idOf(n + 1)))).toBe(false);
    manager.outage = false;
    expect(await claims.claimAndSettle()).toMatchObject({ vouchers: 16, parked: [] });
  });

  it('retries a set-aside channel after an hour', async () => {
    let now = 1_000_000;
    claims = new BatchClaims(manager as unknown as BatchSettlementChannelManager, storage, {
      intervalMs: 60_000,
      threshold: 0n,
      now: () => now,
    });
    manager.refused.add(idOf(3));
    await claims.claimAndSettle();
    manager.refused.clear();
    now += 60 * 60 * 1000 + 1;
    expect(claims.isParked(idOf(3))).toBe(false);
    expect(await claims.claimAndSettle()).toMatchObject({ vouchers: 1, parked: [] });
  });

  it('settles the claims that landed before a refused batch, even when nothing else is claimed', async () => {
    manager.refused.add(idOf(16));
    manager.partial = true;
    const round = await claims.claimAndSettle();
    expect(round).toMatchObject({ vouchers: 0, parked: [idOf(16)] });
    expect(round.settled).toBeDefined();
  });
});
