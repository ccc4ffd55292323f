import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * An AsyncLocalStorage for asynchronous operations that is switched on only while one of them
 * is in flight. On Node 20 an AsyncLocalStorage, once `run`, keeps promise and async hooks on
 * for the whole process: every promise and every request pays for it (about 10 µs of CPU per
 * free request, measured), though only the few operations run under it ever read it. Here the
 * storage is disabled again when the last `run` has ended, so between them nothing pays.
 *
 * Within a run, and in everything it starts while it is in flight, `getStore()` answers as an
 * AsyncLocalStorage does. After every run ended it answers undefined: work a run left behind
 * and never awaited (nobody reads its result any more) then finds no store.
 */
export class ScopedStorage<T> {
  private readonly storage = new AsyncLocalStorage<T>();
  private running = 0;

  getStore(): T | undefined {
    return this.storage.getStore();
  }

  /** `operation` with `store` as its store, until the promise it returns has settled. */
  async run<R>(store: T, operation: () => Promise<R>): Promise<R> {
    this.running += 1;
    try {
      return await this.storage.run(store, operation);
    } finally {
      this.running -= 1;
      if (this.running === 0) this.storage.disable();
    }
  }
}
