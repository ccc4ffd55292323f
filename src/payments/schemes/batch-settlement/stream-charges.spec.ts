import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InMemoryChannelStorage, type ChannelStorage } from '@x402/evm/batch-settlement/server';
import { channelRecord } from '../../../../test/support/payment-doubles.js';
import { LocalChannelStorage } from '../../channels/local-channel-storage.js';
import { CLAIM_MARK_MS, claimFloorOf, clearClaiming, markClaiming } from './claim-marks.js';
import {
  chargeStreamUpdate,
  coverOn,
  lastStreamChargeOf,
  lastStreamLabelOf,
  raiseCover,
  resendOn,
  streamChargeOn,
  takeBackOn,
  takeBackStreamCharge,
  takeResend,
  type StreamChannel,
} from './stream-charges.js';

const UNIT = 100n;
const NOW = 5_000;
const SIGNATURE = `0x${'2c'.repeat(65)}`;
const record = channelRecord({ chargedCumulativeAmount: '2000', signedMaxClaimable: '2000' });

describe('coverOn', () => {
  it('raises the cover to a voucher signing the charged total plus a budget, charging nothing', () => {
    const voucher = { base: '2000', maxClaimableAmount: '2500', signature: SIGNATURE };
    const { outcome, next } = coverOn(record, voucher, NOW);
    expect(outcome.status).toBe('raised');
    expect(next).toEqual({
      ...record,
      signedMaxClaimable: '2500',
      signature: SIGNATURE,
      coverHigh: '2500',
      lastRequestTimestamp: NOW,
    });
  });

  it('refuses the cover sent again: it is public once claimed, so it proves no payer', () => {
    const covered = { ...record, signedMaxClaimable: '2500', signature: SIGNATURE };
    const again = { base: '2000', maxClaimableAmount: '2500', signature: SIGNATURE };
    expect(coverOn(covered, again, NOW)).toEqual({
      outcome: {
        status: 'refused',
        reason:
          'stream_voucher_spent: a stream needs a new voucher above the 2500 the channel was covered for; sign 2000 plus a budget over 500',
      },
      next: covered,
    });
    // a fresh voucher above the cover is taken
    const fresh = { ...again, maxClaimableAmount: '2600', signature: `0x${'3d'.repeat(65)}` };
    expect(coverOn(covered, fresh, NOW).outcome.status).toBe('raised');
  });

  it('refuses an older, higher cover after a per-request voucher lowered the cover', () => {
    // a stream covered 3000; a per-request voucher then signed charged + price = 2100
    const lowered: StreamChannel = {
      ...record,
      chargedCumulativeAmount: '2100',
      signedMaxClaimable: '2100',
      coverHigh: '3000',
    };
    const old = { base: '2100', maxClaimableAmount: '3000', signature: SIGNATURE };
    expect(coverOn(lowered, old, NOW).outcome).toMatchObject({ status: 'refused' });
    const fresh = { ...old, maxClaimableAmount: '3100' };
    expect(coverOn(lowered, fresh, NOW).next).toMatchObject({
      signedMaxClaimable: '3100',
      coverHigh: '3100',
    });
  });

  it('refuses a charged voucher, a moved base, one over the balance, a withdrawal, a held or missing record', () => {
    const reason = (channel: typeof record | undefined, max: string, base = '2000') => {
      const { outcome, next } = coverOn(
        channel,
        { base, maxClaimableAmount: max, signature: SIGNATURE },
        NOW,
      );
      expect(next).toBe(channel);
      return outcome.status === 'refused' ? outcome.reason : outcome.status;
    };
    expect(reason(record, '2000')).toMatch(/^stream_voucher_spent: 2000 is not above the 2000/);
    expect(reason(record, '2500', '1500')).toMatch(/cumulative_amount_mismatch: .* is 2000/);
    expect(reason(record, '200000')).toMatch(/cumulative_exceeds_balance: .* holds 100000/);
    expect(reason({ ...record, withdrawRequestedAt: 7 }, '2500')).toMatch(/withdrawal_pending/);
    const held = {
      ...record,
      pendingRequest: { pendingId: 'p', signedMaxClaimable: '4000', expiresAt: NOW + 1 },
    };
    expect(reason(held, '2500')).toMatch(/channel_busy/);
    expect(reason(undefined, '2500')).toMatch(/missing_channel/);
  });
});

describe('streamChargeOn', () => {
  const covered = { ...record, signedMaxClaimable: '2300' };

  it('adds one unit under the cover and keeps it as the last stream charge', () => {
    const item = { label: 'BTC', content: '{"symbol":"BTC","price":1}' };
    const { outcome, next } = streamChargeOn(covered, UNIT, 'stream-1', NOW, item);
    expect(outcome).toMatchObject({ status: 'charged', cumulative: '2100' });
    expect(next).toEqual({
      ...covered,
      chargedCumulativeAmount: '2100',
      lastStreamCharge: '2100',
      lastStreamChargeId: 'stream-1',
      streamCharges: ['stream-1'],
      lastStreamLabel: 'BTC',
      lastStreamContent: item.content,
      lastStreamResent: undefined,
      chargedBy: 'stream-1',
      lastRequestTimestamp: NOW,
    });
    // the signature over the cover stays: a claim of the charged total is valid with it
    expect(next?.signature).toBe(record.signature);
    expect(next?.signedMaxClaimable).toBe('2300');
  });

  it('charges nothing past the cover or the balance, on a held, withdrawing or missing channel', () => {
    for (const channel of [
      { ...covered, chargedCumulativeAmount: '2300' },
      { ...covered, chargedCumulativeAmount: '2250' },
      { ...covered, signedMaxClaimable: '200000', chargedCumulativeAmount: '99950' },
    ]) {
      const { outcome, next } = streamChargeOn(channel, UNIT, 's', NOW);
      expect(outcome.status).toBe('exhausted');
      expect(next).toBe(channel);
    }
    const held = {
      ...covered,
      pendingRequest: { pendingId: 'p', signedMaxClaimable: '4000', expiresAt: NOW + 1 },
    };
    expect(streamChargeOn(held, UNIT, 's', NOW)).toEqual({
      outcome: { status: 'busy' },
      next: held,
    });
    const withdrawing = { ...covered, withdrawRequestedAt: 9 };
    expect(streamChargeOn(withdrawing, UNIT, 's', NOW).outcome).toEqual({
      status: 'refused',
      reason: 'invalid_batch_settlement_evm_withdrawal_pending',
    });
    expect(streamChargeOn(undefined, UNIT, 's', NOW).outcome.status).toBe('refused');
  });
});

describe('resendOn', () => {
  const kept: StreamChannel = {
    ...record,
    chargedCumulativeAmount: '2200',
    lastStreamCharge: '2200',
    lastStreamLabel: 'BTC',
    lastStreamContent: '{"symbol":"BTC"}',
  };

  it('gives the last charge’s update once to a reconnect that saw less, marking it re-sent', () => {
    const { outcome, next } = resendOn(kept, 2100n, ['ETH', 'BTC']);
    expect(outcome).toEqual({ cumulative: '2200', label: 'BTC', content: '{"symbol":"BTC"}' });
    expect(next).toEqual({ ...kept, lastStreamResent: true });
    expect(resendOn(next, 0n, ['BTC'])).toEqual({ outcome: undefined, next });
  });

  it('gives nothing to a reconnect that saw it, to a stream without its symbol, or when nothing is kept', () => {
    for (const [channel, seen, labels] of [
      [kept, 2200n, ['BTC']],
      [kept, 9000n, ['BTC']],
      [kept, 0n, ['ETH']],
      [{ ...kept, lastStreamContent: undefined } as StreamChannel, 0n, ['BTC']],
      [{ ...kept, lastStreamLabel: undefined } as StreamChannel, 0n, ['BTC']],
      [record, 0n, ['BTC']],
      [undefined, 0n, ['BTC']],
    ] as const) {
      expect(resendOn(channel, seen, labels)).toEqual({ outcome: undefined, next: channel });
    }
  });
});

describe('takeBackOn', () => {
  const charged: StreamChannel = {
    ...record,
    chargedCumulativeAmount: '2200',
    lastStreamCharge: '2200',
    lastStreamChargeId: 'b',
    streamCharges: ['a', 'b'],
  };
  const a = { cumulative: '2100', id: 'a' };
  const b = { cumulative: '2200', id: 'b' };

  it('takes the undelivered update off the total and the last stream charge', () => {
    const labelled: StreamChannel = { ...charged, lastStreamLabel: 'ETH', lastStreamContent: 'x' };
    const { outcome, next } = takeBackOn(labelled, b, UNIT, NOW);
    expect(outcome).toBe('taken');
    expect(next).toMatchObject({
      chargedCumulativeAmount: '2100',
      lastStreamCharge: '2100',
      streamCharges: ['a'],
    });
    // what the charge before paid for is not kept
    expect(lastStreamLabelOf(next)).toBeUndefined();
    expect((next as StreamChannel).lastStreamContent).toBeUndefined();
  });

  it('keeps a charge whose update already went out as a reconnect’s free re-send', () => {
    const resent: StreamChannel = { ...charged, lastStreamContent: 'x', lastStreamResent: true };
    expect(takeBackOn(resent, b, UNIT, NOW)).toEqual({ outcome: 'delivered', next: resent });
  });

  it('takes one unit off a total charged on top since, leaving the later last stream charge', () => {
    const { outcome, next } = takeBackOn(charged, a, UNIT, NOW);
    expect(outcome).toBe('taken');
    expect(next).toMatchObject({
      chargedCumulativeAmount: '2100',
      lastStreamCharge: '2200',
      streamCharges: ['b'],
    });
  });

  it('takes back two streams’ charges, the lower first: each its own (two streams, one channel)', () => {
    const first = takeBackOn(charged, a, UNIT, NOW);
    expect(first.outcome).toBe('taken');
    // the total is now below the second charge's cumulative: still that charge, still taken
    const second = takeBackOn(first.next, b, UNIT, NOW);
    expect(second.outcome).toBe('taken');
    expect(second.next).toMatchObject({ chargedCumulativeAmount: '2000', streamCharges: [] });
    // and neither twice
    expect(takeBackOn(second.next, a, UNIT, NOW).outcome).toBe('gone');
  });

  it('never goes under a live claim mark; a lapsed one holds nothing', () => {
    const mark = { by: 'r', upTo: '2200', until: NOW + 1 };
    const marked = { ...charged, claiming: [mark] } as StreamChannel;
    expect(claimFloorOf(marked, NOW)).toBe(2200n);
    expect(takeBackOn(marked, b, UNIT, NOW).outcome).toBe('claimed');
    expect(claimFloorOf(marked, NOW + 1)).toBe(0n);
    expect(takeBackOn(marked, b, UNIT, NOW + 1).outcome).toBe('taken');
    expect(CLAIM_MARK_MS).toBeGreaterThan(60_000);
  });

  it('never goes under the claimed total, and finds nothing for a charge it does not hold', () => {
    expect(takeBackOn({ ...charged, totalClaimed: '2200' }, b, UNIT, NOW).outcome).toBe('claimed');
    expect(takeBackOn(charged, { cumulative: '2200', id: 'c' }, UNIT, NOW).outcome).toBe('gone');
    // a record replaced by one that never held it (a per-request voucher's, say)
    expect(takeBackOn(record, b, UNIT, NOW).outcome).toBe('gone');
    expect(takeBackOn(undefined, b, UNIT, NOW).outcome).toBe('gone');
  });
});

describe.each([
  ['memory', (): ChannelStorage => new InMemoryChannelStorage()],
  [
    'file journal',
    (): ChannelStorage =>
      new LocalChannelStorage(mkdtempSync(path.join(os.tmpdir(), 'stream-charges-'))),
  ],
])('stream charges on the %s channel store', (_name, newStore) => {
  let storage: ChannelStorage;
  beforeEach(async () => {
    storage = newStore();
    await storage.updateChannel(record.channelId, () => record);
  });
  afterEach(async () => {
    if (storage instanceof LocalChannelStorage) await storage.close();
  });

  it('charges exactly the covered updates, concurrently, and takes one back', async () => {
    const voucher = { base: '2000', maxClaimableAmount: '2500', signature: SIGNATURE };
    expect((await raiseCover(storage, record.channelId, voucher)).status).toBe('raised');
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        chargeStreamUpdate(storage, record.channelId, UNIT, `s-${index}`),
      ),
    );
    const cumulatives = outcomes.flatMap((o) => (o.status === 'charged' ? [o.cumulative] : []));
    expect(cumulatives.sort()).toEqual(['2100', '2200', '2300', '2400', '2500']);
    expect(outcomes.filter((o) => o.status === 'exhausted')).toHaveLength(3);
    const last = outcomes.findIndex((o) => o.status === 'charged' && o.cumulative === '2500');
    const charge = { cumulative: '2500', id: `s-${last}` };
    expect(await takeBackStreamCharge(storage, record.channelId, charge, UNIT)).toBe('taken');
    const after = await storage.get(record.channelId);
    expect(after).toMatchObject({ chargedCumulativeAmount: '2400', signedMaxClaimable: '2500' });
    expect(lastStreamChargeOf(after)).toBe('2400');
  });

  it('re-sends a charge at most once, however many reconnects ask at once', async () => {
    const voucher = { base: '2000', maxClaimableAmount: '2500', signature: SIGNATURE };
    await raiseCover(storage, record.channelId, voucher);
    const item = { label: 'BTC', content: '{"symbol":"BTC","price":5}' };
    await chargeStreamUpdate(storage, record.channelId, UNIT, 's', item);
    const given = await Promise.all(
      Array.from({ length: 4 }, () => takeResend(storage, record.channelId, 0n, ['BTC'])),
    );
    expect(given.filter((kept) => kept !== undefined)).toEqual([{ cumulative: '2100', ...item }]);
    // the next charge is one more update to re-send, once
    await chargeStreamUpdate(storage, record.channelId, UNIT, 's', { ...item, content: 'x' });
    expect(await takeResend(storage, record.channelId, 2100n, ['BTC'])).toEqual({
      cumulative: '2200',
      label: 'BTC',
      content: 'x',
    });
  });

  it('never takes a charge back under what a claim in flight claims, then does once it is done', async () => {
    await storage.updateChannel(record.channelId, () => ({
      ...record,
      chargedCumulativeAmount: '2100',
      signedMaxClaimable: '2500',
      streamCharges: ['s'],
    }));
    const charge = { cumulative: '2100', id: 's' };
    const marked = await markClaiming(storage, record.channelId, 'round-1', Date.now());
    expect(marked?.chargedCumulativeAmount).toBe('2100');
    expect(await takeBackStreamCharge(storage, record.channelId, charge, UNIT)).toBe('claimed');
    expect((await storage.get(record.channelId))?.chargedCumulativeAmount).toBe('2100');
    await clearClaiming(storage, record.channelId, 'round-1', Date.now());
    expect(await takeBackStreamCharge(storage, record.channelId, charge, UNIT)).toBe('taken');
    expect((await storage.get(record.channelId))?.chargedCumulativeAmount).toBe('2000');
  });
});

describe('stream charges on the file journal, after a restart', () => {
  it('keeps every charge made before the process went', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'stream-charges-restart-'));
    const first = new LocalChannelStorage(dir);
    await first.updateChannel(record.channelId, () => record);
    const voucher = { base: '2000', maxClaimableAmount: '2300', signature: SIGNATURE };
    await raiseCover(first, record.channelId, voucher);
    await chargeStreamUpdate(first, record.channelId, UNIT, 'a');
    await chargeStreamUpdate(first, record.channelId, UNIT, 'b');
    await first.close();
    const second = new LocalChannelStorage(dir);
    const replayed = await second.get(record.channelId);
    await second.close();
    expect(replayed).toMatchObject({
      chargedCumulativeAmount: '2200',
      signedMaxClaimable: '2300',
      signature: SIGNATURE,
      lastStreamCharge: '2200',
    });
  });
});
