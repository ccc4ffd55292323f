import { channelRecord } from '../../../../test/support/payment-doubles.js';
import { describeWithRedis, useRedis } from '../../../../test/support/redis-suite.js';
import { ComparingRedisChannelStorage } from '../../channels/redis-channel-storage.js';
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
    expect((await raiseCover(two, record.channelId, voucher, UNIT)).status).toBe('raised');
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
    expect(await takeBackStreamCharge(two, record.channelId, charge, UNIT, () => false)).toBe(
      'taken',
    );
    const after = await one.get(record.channelId);
    expect(after).toMatchObject({ chargedCumulativeAmount: '2400', signedMaxClaimable: '2500' });
    expect(lastStreamChargeOf(after)).toBe('2400');
  });
});
