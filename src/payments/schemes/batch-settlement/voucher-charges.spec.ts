import { jest } from '@jest/globals';
import { InMemoryChannelStorage, type Channel } from '@x402/evm/batch-settlement/server';
import { channelRecord } from '../../../../test/support/payment-doubles.js';
import { chargeOn, commitCharge, type VoucherCharge } from './voucher-charges.js';

const record = channelRecord();
const charge: VoucherCharge = {
  id: 'request-1',
  channelId: record.channelId,
  base: '2000',
  charged: '4000',
  signature: `0x${'1c'.repeat(65)}`,
  stamped: (next) => next,
};
const NOW = 5_000;

describe('chargeOn', () => {
  it('charges the voucher on the base it was checked against, voiding an expired reservation', () => {
    const expired = {
      ...record,
      pendingRequest: { pendingId: 'x', signedMaxClaimable: '4000', expiresAt: NOW - 1 },
    };
    const { outcome, next } = chargeOn(expired, charge, NOW);
    expect(outcome).toEqual({ status: 'committed', previous: expired });
    expect(next).toEqual({
      ...record,
      chargedBy: 'request-1',
      chargedCumulativeAmount: '4000',
      signedMaxClaimable: '4000',
      signature: charge.signature,
      lastRequestTimestamp: NOW,
      pendingRequest: undefined,
    });
  });

  it('charges nothing on a record moved on, held by a request or a refund, or missing', () => {
    const moved = { ...record, chargedCumulativeAmount: '4000' };
    expect(chargeOn(moved, charge, NOW)).toEqual({
      outcome: { status: 'stale', channel: moved },
      next: moved,
    });
    const held = {
      ...record,
      pendingRequest: { pendingId: 'refund:1', signedMaxClaimable: '2000', expiresAt: NOW + 1 },
    };
    expect(chargeOn(held, charge, NOW)).toEqual({
      outcome: { status: 'busy', channel: held },
      next: held,
    });
    expect(chargeOn(undefined, charge, NOW)).toEqual({
      outcome: { status: 'missing' },
      next: undefined,
    });
  });

  it('charges nothing over the balance or on a channel whose payer started a withdrawal', () => {
    const drained = { ...record, balance: '3999' };
    expect(chargeOn(drained, charge, NOW).outcome).toEqual({
      status: 'refused',
      reason: 'invalid_batch_settlement_evm_cumulative_exceeds_balance',
    });
    const withdrawing = { ...record, withdrawRequestedAt: 1 };
    expect(chargeOn(withdrawing, charge, NOW).outcome).toEqual({
      status: 'refused',
      reason: 'invalid_batch_settlement_evm_withdrawal_pending',
    });
  });

  it('writes the record as the charge stamps it', () => {
    const stamped = {
      ...charge,
      stamped: (next: Channel) => ({ ...next, lastRequestTimestamp: 7 }),
    };
    expect(chargeOn(record, stamped, NOW).next?.lastRequestTimestamp).toBe(7);
  });
});

describe('commitCharge', () => {
  it('writes with one compare-and-set on the record as it was checked, when the store has one', async () => {
    const storage = new InMemoryChannelStorage();
    await storage.updateChannel(record.channelId, () => record);
    const replaceIfUnchanged = jest.fn(async (_seen: Channel, next: Channel) => {
      await storage.updateChannel(record.channelId, () => next);
      return true;
    });
    const update = jest.spyOn(storage, 'updateChannel');
    const comparing = Object.assign(storage, { replaceIfUnchanged });

    expect(await commitCharge(comparing, charge, record)).toMatchObject({ status: 'committed' });

    expect(replaceIfUnchanged).toHaveBeenCalledTimes(1);
    expect(update).toHaveBeenCalledTimes(1); // the fake's own write, nothing else
    expect((await storage.get(record.channelId))?.chargedCumulativeAmount).toBe('4000');
  });

  it('decides on the record as it is now when it changed since it was checked', async () => {
    const storage = new InMemoryChannelStorage();
    const claimed = { ...record, totalClaimed: '2000' };
    await storage.updateChannel(record.channelId, () => claimed);
    const comparing = Object.assign(storage, { replaceIfUnchanged: () => Promise.resolve(false) });

    expect(await commitCharge(comparing, charge, record)).toMatchObject({ status: 'committed' });
    expect(await storage.get(record.channelId)).toMatchObject({
      chargedCumulativeAmount: '4000',
      totalClaimed: '2000',
    });

    // and another voucher on the same base, committed second, is stale: nothing charged
    const second = { ...charge, signature: `0x${'1d'.repeat(65)}` };
    expect(await commitCharge(storage, second, record)).toMatchObject({ status: 'stale' });
    expect((await storage.get(record.channelId))?.signature).toBe(charge.signature);
  });
});
