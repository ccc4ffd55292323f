import type { ServerResponse } from 'node:http';

/** How often a writer waiting for its socket to drain looks again, besides 'drain' events. */
const FLUSH_CHECK_MS = 50;

/** What a socket says of its queue (absent on test doubles without one). */
interface QueueState {
  readonly writableLength?: number;
  readonly writableNeedDrain?: boolean;
}

/**
 * A stream's writes to its reply, and whether they have left this process: the write callback
 * comes once a write's bytes are in the kernel; anything still queued here (this reply's or its
 * socket's buffer, a write not called back yet) is unflushed.
 */
export class SocketWriter {
  lastWriteAt = Date.now();
  /** Writes whose bytes have not left this process yet. */
  private inFlight = 0;

  constructor(private readonly response: ServerResponse) {}

  /** Writes `text`; resolves once its bytes left this process, false if they cannot. */
  write(text: string): Promise<boolean> {
    const { response } = this;
    if (response.destroyed || !response.writable) return Promise.resolve(false);
    this.lastWriteAt = Date.now();
    this.inFlight += 1;
    return new Promise((resolve) => {
      response.write(text, (error) => {
        this.inFlight -= 1;
        resolve(error === undefined || error === null);
      });
    });
  }

  /** Whether anything written has not left this process yet. */
  unflushed(): boolean {
    const response: QueueState = this.response;
    const socket = this.response.socket as QueueState | null | undefined;
    return (
      this.inFlight > 0 ||
      (response.writableLength ?? 0) > 0 ||
      response.writableNeedDrain === true ||
      (socket?.writableLength ?? 0) > 0 ||
      socket?.writableNeedDrain === true
    );
  }

  /** Resolves true once nothing is unflushed; false if the reply closes or `over()` first. */
  async flushed(over: () => boolean): Promise<boolean> {
    const { response } = this;
    const socket = response.socket;
    while (this.unflushed()) {
      if (over() || response.destroyed) return false;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          response.off('drain', done);
          response.off('close', done);
          socket?.off('drain', done);
          resolve();
        };
        const timer = setTimeout(done, FLUSH_CHECK_MS);
        response.once('drain', done);
        response.once('close', done);
        socket?.once('drain', done);
      });
    }
    return !over() && !response.destroyed;
  }
}
