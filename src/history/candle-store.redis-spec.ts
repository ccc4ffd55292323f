import { expect, it } from '@jest/globals';
import { describeWithRedis, useRedis } from '../../test/support/redis-suite.js';
import type { Candle } from './candle.js';
import { RedisCandleStore } from './candle-store.js';

const CANDLE: Candle = {
  time: '2026-11-20T11:00:00.000Z',
  open: 91180.2,
  high: 91302.55,
  low: 91122.1,
  close: 91260.27,
  volume: 412.5318,
  volumeUsd: 37632011.42,
  venues: ['binance', 'coinbase'],
  closed: true,
};
const START = Date.parse(CANDLE.time);

describeWithRedis('RedisCandleStore', () => {
  const redis = useRedis();

  it('keeps candles and starts without one for every instance, by symbol and interval', async () => {
    const one = new RedisCandleStore(redis.client);
    const other = new RedisCandleStore(redis.client);
    await one.put(
      'BTC',
      '1h',
      new Map([
        [START, CANDLE],
        [START + 3_600_000, null],
      ]),
    );
    const kept = await other.get('BTC', '1h', [START, START + 3_600_000, START + 7_200_000]);
    expect([...kept]).toEqual([
      [START, CANDLE],
      [START + 3_600_000, null],
    ]);
    expect((await other.get('BTC', '1d', [START])).size).toBe(0);
    expect((await other.get('ETH', '1h', [START])).size).toBe(0);
    expect(await redis.client.ttl('history:candles:BTC:1h')).toBeGreaterThan(7 * 86_400);
  });
});
