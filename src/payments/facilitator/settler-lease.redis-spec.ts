import { privateKeyToAddress } from 'viem/accounts';
import { describeWithRedis, useRedis } from '../../../test/support/redis-suite.js';
import { SETTLER_LEASE_TTL_MS, SettlerLease } from './settler-lease.js';

const KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeWithRedis('SettlerLease', () => {
  const shared = useRedis();

  it("tells the facilitator when the settlement key changes hands, so it reads the account's nonce again", async () => {
    const changes: string[] = [];
    const lease = await SettlerLease.acquire(shared.client, KEY, () => changes.push('changed'));
    expect(changes).toEqual([]);
    // another instance holds the key past this one's next renewal (a third of the TTL), not two
    const redisKey = `x402:settler:${privateKeyToAddress(KEY).toLowerCase()}`;
    const otherHoldMs = Math.round(SETTLER_LEASE_TTL_MS / 3) + 1000;
    await shared.client.set(redisKey, 'another instance', {
      expiration: { type: 'PX', value: otherHoldMs },
    });
    // lost at the next renewal, taken back at the one after: told both times
    for (let waited = 0; changes.length < 2; waited += 100) {
      if (waited > SETTLER_LEASE_TTL_MS) throw new Error(`told ${String(changes.length)} times`);
      await sleep(100);
    }
    expect(changes).toEqual(['changed', 'changed']);
    await lease.onApplicationShutdown();
  }, 20_000);
});
