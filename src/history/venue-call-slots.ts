/** No venue call slot came free in time: the venues are busy with other history requests. */
export class VenueCallsBusy extends Error {
  constructor(readonly waitedMs: number) {
    super(`no venue call slot came free within ${String(waitedMs)} ms`);
    this.name = 'VenueCallsBusy';
  }
}

interface Waiting {
  readonly start: () => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * At most `limit` venue candle calls in flight across every request of this instance
 * (HISTORY_VENUE_CALLS): a call beyond it waits its turn (first come, first served) for at most
 * `waitMs`, then fails with VenueCallsBusy without having been made.
 */
export class VenueCallSlots {
  private running = 0;
  private readonly waiting: Waiting[] = [];

  constructor(
    readonly limit: number,
    readonly waitMs: number,
  ) {}

  /** Calls in flight now. */
  get inFlight(): number {
    return this.running;
  }

  /** `call` once a slot is free; VenueCallsBusy if none frees within `waitMs`. */
  run<T>(call: () => Promise<T>): Promise<T> {
    if (this.running < this.limit && this.waiting.length === 0) return this.start(call);
    return new Promise<T>((resolve, reject) => {
      const entry: Waiting = {
        start: () => {
          clearTimeout(entry.timer);
          this.start(call).then(resolve, reject);
        },
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(entry), 1);
          reject(new VenueCallsBusy(this.waitMs));
        }, this.waitMs),
      };
      this.waiting.push(entry);
    });
  }

  private async start<T>(call: () => Promise<T>): Promise<T> {
    this.running += 1;
    try {
      return await call();
    } finally {
      this.running -= 1;
      this.waiting.shift()?.start();
    }
  }
}
