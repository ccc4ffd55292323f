import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { TimeoutSlot } from '../common/timeout-slot.js';
import { RedisScript, withinDeadline, type RedisClient } from './redis-connection.js';

/**
 * Takes the key for ARGV[1] for ARGV[2] ms when it is free, or extends it while ARGV[1] holds
 * it; 1 if ARGV[1] holds it now, 0 if another holder does.
 */
const HOLD_LEASE = new RedisScript(`
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`);

/** Deletes a lease key only while ARGV[1] still holds it. */
const RELEASE_LEASE = new RedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`);

export interface LeaseOptions {
  readonly key: string;
  /** A holder that stops renewing (died, cut off from Redis) loses the key after this long. */
  readonly ttlMs: number;
  /** Time between two renewals, or between two tries to take the key while another holds it. */
  readonly renewEveryMs: number;
  /** The timer the renewals run on. */
  readonly timer: TimeoutSlot;
}

/** What a kept lease tells its user; `held` and `lost` only when that changes. */
export interface LeaseWatcher {
  /** This process holds the key now. */
  held?(): void;
  /** Another holder has the key now, where this process held it (or could not tell) before. */
  lost?(): void;
  /** Redis did not answer; whether this process still holds the key is unknown until it does. */
  unreachable?(error: unknown): void;
}

/**
 * A Redis key held by one process at a time, with a TTL so that a holder that dies frees it:
 * taken when free, renewed on a timer while held, taken again when it comes free, and deleted
 * (only while still this process's) on release.
 */
export class RedisLease {
  /** This process as a holder: host, pid, and a random part for restarts. */
  readonly holder = `${hostname()}:${String(process.pid)}:${randomUUID()}`;
  private state: 'held' | 'not-held' | 'unknown' = 'not-held';
  private watcher: LeaseWatcher | undefined;
  /** The renewal in flight, which a release waits for. */
  private renewal: Promise<void> | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly options: LeaseOptions,
  ) {}

  get key(): string {
    return this.options.key;
  }

  /** One try: takes the key if free, or extends it if already held. Throws if Redis fails. */
  async hold(): Promise<boolean> {
    const held =
      (await HOLD_LEASE.run(
        this.redis,
        [this.options.key],
        [this.holder, String(this.options.ttlMs)],
      )) === 1;
    this.state = held ? 'held' : 'not-held';
    return held;
  }

  /** Whoever holds the key now, if anyone. */
  holderNow(): Promise<string | null> {
    return withinDeadline(this.redis.get(this.options.key));
  }

  /**
   * Holds the key from now on: renews it every `renewEveryMs` while held, and otherwise tries to
   * take it as often (at once when not held now), telling `watcher` what changes.
   */
  keep(watcher: LeaseWatcher): void {
    this.watcher = watcher;
    if (this.state === 'held') this.scheduleRenewal();
    else this.renewal = this.renew();
  }

  /** Stops renewing and deletes the key if still this process's, handing it over at once. */
  async release(): Promise<void> {
    await this.stop();
    await RELEASE_LEASE.run(this.redis, [this.options.key], [this.holder]).catch(() => undefined);
    this.state = 'not-held';
  }

  /** Stops renewing and leaves the key to expire, as a holder that died would. */
  async abandon(): Promise<void> {
    await this.stop();
  }

  private async stop(): Promise<void> {
    this.watcher = undefined;
    this.options.timer.clear();
    await this.renewal;
  }

  private scheduleRenewal(): void {
    this.options.timer.set(this.options.renewEveryMs, () => {
      this.renewal = this.renew();
    });
  }

  private async renew(): Promise<void> {
    const before = this.state;
    let error: unknown;
    try {
      await this.hold();
    } catch (cause) {
      error = cause;
      this.state = 'unknown';
    }
    this.renewal = undefined;
    const watcher = this.watcher;
    if (watcher === undefined) return;
    if (this.state === 'unknown') watcher.unreachable?.(error);
    else if (this.state !== before) {
      if (this.state === 'held') watcher.held?.();
      else watcher.lost?.();
    }
    this.scheduleRenewal();
  }
}
