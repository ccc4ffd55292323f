/** Something a test started and must stop. */
export interface Closable {
  close(): Promise<void>;
}

/**
 * What a test set-up started, closed last-first, also when the set-up failed half-way (a chain
 * or server left running keeps jest from exiting).
 */
export class Started {
  private readonly closers: (() => Promise<void>)[] = [];

  /** Waits for `starting` and remembers to close what it started. */
  async add<T extends Closable>(starting: Promise<T>): Promise<T> {
    const running = await starting;
    this.defer(() => running.close());
    return running;
  }

  /** Remembers to run `close` (for something started that has no `close()` of its own). */
  defer(close: () => Promise<void>): void {
    this.closers.unshift(close);
  }

  async closeAll(): Promise<void> {
    for (const close of this.closers.splice(0)) await close();
  }
}
