import type { Channel } from '@x402/evm/batch-settlement/server';
import { CHANNEL_CONFIG, channelRecord } from '../../../test/support/payment-doubles.js';
import { LASTING_HOLD, onlyReservation } from './channel-holds.js';

const record: Channel = channelRecord({ onchainSyncedAt: 1 });
const reserved: Channel = {
  ...record,
  channelConfig: { ...CHANNEL_CONFIG },
  signedMaxClaimable: '4000',
  signature: `0x${'1c'.repeat(65)}`,
  lastRequestTimestamp: 2,
  pendingRequest: { pendingId: 'a-uuid', signedMaxClaimable: '4000', expiresAt: 60_000 },
};

describe('onlyReservation', () => {
  it('is a request taking or letting go of its reservation, nothing else', () => {
    expect(onlyReservation(record, reserved)).toBe(true);
    expect(onlyReservation(reserved, { ...reserved, pendingRequest: undefined })).toBe(true);
  });

  it('is not a charge, a new on-chain state, a new or deleted record, or a lasting hold', () => {
    expect(onlyReservation(reserved, { ...reserved, chargedCumulativeAmount: '4000' })).toBe(false);
    expect(onlyReservation(record, { ...reserved, onchainSyncedAt: 3 })).toBe(false);
    expect(onlyReservation(record, { ...reserved, balance: '200000' })).toBe(false);
    expect(onlyReservation(undefined, reserved)).toBe(false);
    expect(onlyReservation(reserved, undefined)).toBe(false);
    const hold = { ...reserved.pendingRequest!, pendingId: `${LASTING_HOLD}x` };
    expect(onlyReservation(record, { ...record, pendingRequest: hold })).toBe(false);
    expect(onlyReservation({ ...record, pendingRequest: hold }, record)).toBe(false);
  });
});
