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
 * (HISTORY_VENUE_CALLS). A call beyond it waits for at most `waitMs`, then fails with
 * VenueCallsBusy without having been made. Waiting calls are started client by client in turn
 * (each client's own in the order they came), so one address queuing many calls delays another
 * address's call by one turn, not by its whole queue.
 */
export class VenueCallSlots {
  private running = 0;
  /** Each client's waiting calls; the map's order is the clients' turn order. */
  private readonly waiting = new Map<string, Waiting[]>();

  constructor(
    readonly limit: number,
    readonly waitMs: number,
  ) {}

  /** Calls in flight now. */
  get inFlight(): number {
    return this.running;
  }

  /** `call` for `client` once a slot is its turn; VenueCallsBusy if none comes within `waitMs`. */
  run<T>(call: () => Promise<T>, client = ''): Promise<T> {
    if (this.running < this.limit && this.waiting.size === 0) return this.start(call);
    return new Promise<T>((resolve, reject) => {
      const entry: Waiting = {
        start: () => {
          clearTimeout(entry.timer);
          this.start(call).then(resolve, reject);
        },
        timer: setTimeout(() => {
          this.forget(client, entry);
          reject(new VenueCallsBusy(this.waitMs));
        }, this.waitMs),
      };
      const queue = this.waiting.get(client);
      if (queue === undefined) this.waiting.set(client, [entry]);
      else queue.push(entry);
    });
  }

  private async start<T>(call: () => Promise<T>): Promise<T> {
    this.running += 1;
    try {
      return await call();
    } finally {
      this.running -= 1;
      this.startNext();
    }
  }

  /** Starts the first waiting call of the client whose turn it is; that client goes last. */
  private startNext(): void {
    const next = this.waiting.entries().next();
    if (next.done === true) return;
    const [client, queue] = next.value;
    const entry = queue.shift() as Waiting;
    this.waiting.delete(client);
    if (queue.length > 0) this.waiting.set(client, queue);
    entry.start();
  }

  private forget(client: string, entry: Waiting): void {
    const queue = this.waiting.get(client);
    if (queue === undefined) return;
    queue.splice(queue.indexOf(entry), 1);
    if (queue.length === 0) this.waiting.delete(client);
  }
}
