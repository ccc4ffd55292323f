import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import { privateKeyToAddress } from 'viem/accounts';
import { StartupError } from '../common/startup-error.js';
import type { RedisClient } from '../shared-state/redis-connection.js';
import { RELEASE_LEASE, RENEW_LEASE, leaseHolder } from '../shared-state/redis-lease.js';

/** A holder that stops renewing (crashed, cut off) loses its settlement key after this long. */
export const SETTLER_LEASE_TTL_MS = 10_000;
const RENEW_EVERY_MS = SETTLER_LEASE_TTL_MS / 3;
const LEASE_SET = {
  condition: 'NX',
  expiration: { type: 'PX', value: SETTLER_LEASE_TTL_MS },
} as const;

/**
 * One live instance per settlement key. The embedded facilitator settles with its own key and
 * counts that account's transaction nonces in this process: two instances settling with one key
 * pick the same nonces and one of their transactions fails (a spurious 402). So, with REDIS_URL
 * set, an instance holds `x402:settler:<address>` (SET NX with a TTL, renewed every few
 * seconds); one started with a key another live instance holds refuses to start, naming the
 * problem. A holder that dies without closing frees the key within SETTLER_LEASE_TTL_MS.
 */
export class SettlerLease implements OnApplicationShutdown {
  private readonly logger = new Logger(SettlerLease.name);
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
    private readonly holder: string,
  ) {}

  static async acquire(
    redis: RedisClient,
    settlerPrivateKey: `0x${string}`,
  ): Promise<SettlerLease> {
    const address = privateKeyToAddress(settlerPrivateKey);
    const key = `x402:settler:${address.toLowerCase()}`;
    const holder = leaseHolder();
    const taken = await redis.set(key, holder, LEASE_SET);
    if (taken === null) {
      const other = (await redis.get(key)) ?? 'another instance';
      throw new StartupError(
        `X402_SETTLER_PRIVATE_KEY: settler ${address} is already used by another live instance ` +
          `(${other}) sharing this REDIS_URL. Give every instance its own settlement key (fund ` +
          'each with gas): two instances settling with one key collide on transaction nonces ' +
          `and refuse payments. If that instance has just died, its hold ends within ${String(SETTLER_LEASE_TTL_MS / 1000)} s.`,
      );
    }
    const lease = new SettlerLease(redis, key, holder);
    lease.timer = setInterval(() => {
      void lease.renew();
    }, RENEW_EVERY_MS);
    lease.timer.unref();
    return lease;
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await RELEASE_LEASE.run(this.redis, [this.key], [this.holder]).catch(() => undefined);
  }

  private async renew(): Promise<void> {
    try {
      const renewed = await RENEW_LEASE.run(
        this.redis,
        [this.key],
        [this.holder, String(SETTLER_LEASE_TTL_MS)],
      );
      if (renewed === 0) {
        // lost while Redis was unreachable: take it back unless another instance has it now
        const taken = await this.redis.set(this.key, this.holder, LEASE_SET);
        if (taken === null) {
          this.logger.error(
            `another instance now holds this instance's settlement key (${this.key}): two instances settle with one key`,
          );
        }
      }
    } catch (error) {
      this.logger.warn(`could not renew the settlement key's hold: ${String(error)}`);
    }
  }
}
