import { channelRecord } from '../../../../test/support/payment-doubles.js';
import { describeWithRedis, useRedis } from '../../../../test/support/redis-suite.js';
import { ComparingRedisChannelStorage } from '../../channels/redis-channel-storage.js';
import { clearClaiming, markClaiming } from './claim-marks.js';
import {
  chargeStreamUpdate,
  lastStreamChargeOf,
  raiseCover,
  takeBackStreamCharge,
} from './stream-charges.js';

const UNIT = 100n;
const SIGNATURE = `0x${'2c'.repeat(65)}`;
const record = channelRecord({ chargedCumulativeAmount: '2000', signedMaxClaimable: '2000' });

describeWithRedis('stream charges on the Redis channel store', () => {
  const shared = useRedis();

  it('charges exactly the covered updates from two stores (two instances) at once, and takes one back', async () => {
    const one = new ComparingRedisChannelStorage(shared.client, 'stream-charges');
    const two = new ComparingRedisChannelStorage(shared.client, 'stream-charges');
    await one.updateChannel(record.channelId, () => record);
    const voucher = { base: '2000', maxClaimableAmount: '2500', signature: SIGNATURE };
    expect((await raiseCover(two, record.channelId, voucher)).status).toBe('raised');
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        chargeStreamUpdate(index % 2 === 0 ? one : two, record.channelId, UNIT, `s-${index}`),
      ),
    );
    const cumulatives = outcomes.flatMap((o) => (o.status === 'charged' ? [o.cumulative] : []));
    expect(cumulatives.sort()).toEqual(['2100', '2200', '2300', '2400', '2500']);
    expect(outcomes.filter((o) => o.status === 'exhausted')).toHaveLength(3);
    const last = outcomes.findIndex((o) => o.status === 'charged' && o.cumulative === '2500');
    const charge = { cumulative: '2500', id: `s-${last}` };
    expect(await takeBackStreamCharge(two, record.channelId, charge, UNIT)).toBe('taken');
    const after = await one.get(record.channelId);
    expect(after).toMatchObject({ chargedCumulativeAmount: '2400', signedMaxClaimable: '2500' });
    expect(lastStreamChargeOf(after)).toBe('2400');
  });

  it('a take-back on one instance never goes under what a claim round on another is claiming', async () => {
    const claimer = new ComparingRedisChannelStorage(shared.client, 'stream-claims');
    const streamer = new ComparingRedisChannelStorage(shared.client, 'stream-claims');
    await claimer.updateChannel(record.channelId, () => record);
    const voucher = { base: '2000', maxClaimableAmount: '2500', signature: SIGNATURE };
    await raiseCover(streamer, record.channelId, voucher);
    const outcome = await chargeStreamUpdate(streamer, record.channelId, UNIT, 'c-1');
    expect(outcome).toMatchObject({ status: 'charged', cumulative: '2100' });
    // the round on the first instance marks what it claims before its claim transaction
    const claiming = await markClaiming(claimer, record.channelId, 'round-a', Date.now());
    expect(claiming?.chargedCumulativeAmount).toBe('2100');
    // the write of that update fails on the second instance: its charge stays, it is claimed
    const charge = { cumulative: '2100', id: 'c-1' };
    expect(await takeBackStreamCharge(streamer, record.channelId, charge, UNIT)).toBe('claimed');
    expect((await claimer.get(record.channelId))?.chargedCumulativeAmount).toBe('2100');
    // kept for its free re-send on a reconnect
    expect(lastStreamChargeOf(await streamer.get(record.channelId))).toBe('2100');
    await clearClaiming(claimer, record.channelId, 'round-a', Date.now());
    expect(await takeBackStreamCharge(streamer, record.channelId, charge, UNIT)).toBe('taken');
  });
});
