import { Logger } from '@nestjs/common';
import type { SchedulerRegistry } from '@nestjs/schedule';
import { ScheduledTimeout } from '../common/timeout-slot.js';
import type { RedisClient } from '../shared-state/redis-connection.js';
import { RedisLease } from '../shared-state/redis-lease.js';

/** Decides whether this instance polls the venues. */
export interface PollingElection {
  /** This instance as the election names it: its holder id of the polling lease. */
  readonly instance: string;
  /** Calls `lead` when this instance becomes the poller and `follow` when it stops being it. */
  start(lead: () => void, follow: () => void): void;
  stop(handOver?: boolean): Promise<void>;
}

export const POLLING_ELECTION = Symbol('PollingElection');

/** A poller that stops renewing (died, cut off from Redis) is replaced after at most this long. */
export const POLLING_LEASE_TTL_MS = 3000;
const CHECK_EVERY_MS = 1000;

/**
 * One instance at a time polls the venues, so venues see one client's request rate however many
 * instances run: the holder of a RedisLease on `x402:venue-poller` (POLLING_LEASE_TTL_MS),
 * renewed every second. The others try to take it every second; when the poller dies, its key
 * expires and one of them polls within POLLING_LEASE_TTL_MS + 1 s. A poller that cannot renew
 * (Redis lost) stops polling: its published prices would reach nobody, and another instance
 * may have taken over. The lease's timer is the scheduler's `polling-election` timeout.
 */
export class RedisPollingElection implements PollingElection {
  private readonly logger = new Logger('PollingElection');
  private readonly lease: RedisLease;
  private leading = false;

  constructor(redis: RedisClient, scheduler: SchedulerRegistry) {
    this.lease = new RedisLease(redis, {
      key: 'x402:venue-poller',
      ttlMs: POLLING_LEASE_TTL_MS,
      renewEveryMs: CHECK_EVERY_MS,
      timer: new ScheduledTimeout(scheduler, 'polling-election', { unref: true }),
    });
  }

  get instance(): string {
    return this.lease.holder;
  }

  start(lead: () => void, follow: () => void): void {
    const become = (leads: boolean): void => {
      if (leads === this.leading) return;
      this.leading = leads;
      this.logger.log(
        leads ? 'this instance now polls the venues' : 'another instance polls the venues now',
      );
      if (leads) lead();
      else follow();
    };
    this.lease.keep({
      held: () => {
        become(true);
      },
      lost: () => {
        become(false);
      },
      unreachable: () => {
        become(false);
      },
    });
  }

  /** `handOver` false leaves the key to expire, as a poller that died would. */
  async stop(handOver = true): Promise<void> {
    this.leading = false;
    if (handOver) await this.lease.release();
    else await this.lease.abandon();
  }
}
