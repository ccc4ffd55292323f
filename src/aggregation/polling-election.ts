import { Logger } from '@nestjs/common';
import type { RedisClient } from '../shared-state/redis-connection.js';
import { RELEASE_LEASE, RENEW_LEASE, leaseHolder } from '../shared-state/redis-lease.js';

/** Decides whether this instance polls the venues. */
export interface PollingElection {
  /** Calls `lead` when this instance becomes the poller and `follow` when it stops being it. */
  start(lead: () => void, follow: () => void): void;
  stop(handOver?: boolean): Promise<void>;
}

export const POLLING_ELECTION = Symbol('PollingElection');

/** A poller that stops renewing (died, cut off from Redis) is replaced after at most this long. */
export const POLLING_LEASE_TTL_MS = 3000;
const CHECK_EVERY_MS = 1000;
const LEASE_KEY = 'x402:venue-poller';

/**
 * One instance at a time polls the venues, so venues see one client's request rate however many
 * instances run: the holder of a Redis key (SET NX PX, POLLING_LEASE_TTL_MS) renewed every
 * second. The others try to take it every second; when the poller dies, its key expires and one
 * of them polls within POLLING_LEASE_TTL_MS + 1 s. A poller that cannot renew (Redis lost)
 * stops polling: its published prices would reach nobody, and another instance may have taken
 * over.
 */
export class RedisPollingElection implements PollingElection {
  private readonly logger = new Logger('PollingElection');
  private readonly holder = leaseHolder();
  private timer: NodeJS.Timeout | undefined;
  private leading = false;
  private callbacks: { lead: () => void; follow: () => void } | undefined;

  constructor(private readonly redis: RedisClient) {}

  start(lead: () => void, follow: () => void): void {
    this.callbacks = { lead, follow };
    void this.check();
  }

  /** `handOver` false leaves the key to expire, as a poller that died would. */
  async stop(handOver = true): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.callbacks = undefined;
    if (this.leading && handOver) {
      this.leading = false;
      // hand over at once instead of after the TTL
      await RELEASE_LEASE.run(this.redis, [LEASE_KEY], [this.holder]).catch(() => undefined);
    }
  }

  private async check(): Promise<void> {
    let leads = false;
    try {
      leads = this.leading
        ? (await RENEW_LEASE.run(
            this.redis,
            [LEASE_KEY],
            [this.holder, String(POLLING_LEASE_TTL_MS)],
          )) === 1
        : (await this.redis.set(LEASE_KEY, this.holder, {
            condition: 'NX',
            expiration: { type: 'PX', value: POLLING_LEASE_TTL_MS },
          })) !== null;
    } catch {
      leads = false;
    }
    const callbacks = this.callbacks;
    if (callbacks === undefined) return;
    if (leads !== this.leading) {
      this.leading = leads;
      this.logger.log(
        leads ? 'this instance now polls the venues' : 'another instance polls the venues now',
      );
      if (leads) callbacks.lead();
      else callbacks.follow();
    }
    this.timer = setTimeout(() => {
      void this.check();
    }, CHECK_EVERY_MS);
    this.timer.unref();
  }
}
