import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import { privateKeyToAddress } from 'viem/accounts';
import { StartupError } from '../../common/startup-error.js';
import { BackgroundTimeout } from '../../common/timeout-slot.js';
import type { RedisClient } from '../../shared-state/redis-connection.js';
import { RedisLease } from '../../shared-state/redis-lease.js';
import { remoteText } from '../../common/remote-text.js';

/** A holder that stops renewing (crashed, cut off) loses its settlement key after this long. */
export const SETTLER_LEASE_TTL_MS = 10_000;

/**
 * One live instance per settlement key. The embedded facilitator settles with its own key and
 * counts that account's transaction nonces in this process: two instances settling with one key
 * pick the same nonces and one of their transactions fails (a spurious 402). So, with REDIS_URL
 * set, an instance holds `x402:settler:<address>` (a RedisLease renewed every few seconds); one
 * started with a key another live instance holds refuses to start, naming the problem. A holder
 * that dies without closing frees the key within SETTLER_LEASE_TTL_MS. Its renewals run on a
 * plain timer, not the scheduler's: they go on while requests in flight finish at shutdown.
 */
export class SettlerLease implements OnApplicationShutdown {
  private static readonly logger = new Logger(SettlerLease.name);

  private constructor(private readonly lease: RedisLease) {}

  /**
   * `changedHands`: told when the key was lost or taken back, after which another instance may
   * have sent transactions with it (the settling account's nonce must be read again).
   */
  static async acquire(
    redis: RedisClient,
    settlerPrivateKey: `0x${string}`,
    changedHands: () => void = () => undefined,
  ): Promise<SettlerLease> {
    const address = privateKeyToAddress(settlerPrivateKey);
    const lease = new RedisLease(redis, {
      key: `x402:settler:${address.toLowerCase()}`,
      ttlMs: SETTLER_LEASE_TTL_MS,
      renewEveryMs: SETTLER_LEASE_TTL_MS / 3,
      timer: new BackgroundTimeout(),
    });
    if (!(await lease.hold())) {
      const other = (await lease.holderNow()) ?? 'another instance';
      throw new StartupError(
        `X402_SETTLER_PRIVATE_KEY: settler ${address} is already used by another live instance ` +
          `(${other}) sharing this REDIS_URL. Give every instance its own settlement key (fund ` +
          'each with gas): two instances settling with one key collide on transaction nonces ' +
          `and refuse payments. If that instance has just died, its hold ends within ${String(SETTLER_LEASE_TTL_MS / 1000)} s.`,
      );
    }
    // lost while Redis was unreachable, it is taken back as soon as it is free again
    lease.keep({
      held: changedHands,
      lost: () => {
        changedHands();
        SettlerLease.logger.error(
          `another instance now holds this instance's settlement key (${lease.key}): two instances settle with one key`,
        );
      },
      unreachable: (error) => {
        SettlerLease.logger.warn(`could not renew the settlement key's hold: ${remoteText(error)}`);
      },
    });
    return new SettlerLease(lease);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.lease.release();
  }
}
