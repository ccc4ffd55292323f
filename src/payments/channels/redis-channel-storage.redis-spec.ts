import { jest } from '@jest/globals';
import { RedisChannelStorage } from '@x402/evm/batch-settlement/server/redis-storage';
import { channelRecord } from '../../../test/support/payment-doubles.js';
import { describeWithRedis, useRedis } from '../../../test/support/redis-suite.js';
import { commitCharge } from '../schemes/batch-settlement/voucher-charges.js';
import { ComparingRedisChannelStorage } from './redis-channel-storage.js';

const CHANNEL_ID = `0x${'AB'.repeat(32)}`;
const record = channelRecord({
  channelId: CHANNEL_ID.toLowerCase(),
  onchainSyncedAt: 1_795_777_940_564,
  lastRequestTimestamp: 1_795_777_940_593,
});

describeWithRedis('ComparingRedisChannelStorage', () => {
  const shared = useRedis();
  let prefix = 0;
  /** Ours and the SDK's own store over the same keys. */
  function stores(): { ours: ComparingRedisChannelStorage; sdk: RedisChannelStorage } {
    prefix += 1;
    const keyPrefix = `test-${prefix}`;
    return {
      ours: new ComparingRedisChannelStorage(shared.client, keyPrefix),
      sdk: new RedisChannelStorage({ client: shared.client, keyPrefix }),
    };
  }

  it('replaces a record the SDK wrote only while it is still the one read', async () => {
    const { ours, sdk } = stores();
    await sdk.updateChannel(record.channelId, () => record);
    const seen = (await ours.get(record.channelId))!;

    expect(await ours.replaceIfUnchanged(seen, { ...seen, chargedCumulativeAmount: '4000' })).toBe(
      true,
    );
    expect((await sdk.get(record.channelId))?.chargedCumulativeAmount).toBe('4000');
    // the record moved on: the same comparison writes nothing
    expect(await ours.replaceIfUnchanged(seen, { ...seen, chargedCumulativeAmount: '6000' })).toBe(
      false,
    );
    expect((await sdk.get(record.channelId))?.chargedCumulativeAmount).toBe('4000');
  });

  it('charges a voucher checked against the record in one script, one round trip', async () => {
    const { ours, sdk } = stores();
    await sdk.updateChannel(record.channelId, () => record);
    const seen = (await ours.get(record.channelId))!;
    const evals = jest.spyOn(shared.client, 'eval');
    const gets = jest.spyOn(shared.client, 'get');
    try {
      const outcome = await commitCharge(
        ours,
        {
          id: 'request-1',
          channelId: record.channelId,
          base: '2000',
          charged: '4000',
          signature: `0x${'1c'.repeat(65)}`,
          stamped: (next) => next,
        },
        seen,
      );
      expect(outcome).toMatchObject({ status: 'committed' });
      expect(evals).toHaveBeenCalledTimes(1);
      expect(gets).not.toHaveBeenCalled();
    } finally {
      evals.mockRestore();
      gets.mockRestore();
    }
    expect(await sdk.get(record.channelId)).toMatchObject({
      chargedCumulativeAmount: '4000',
      signature: `0x${'1c'.repeat(65)}`,
      chargedBy: 'request-1',
    });
  });
});
