import http from 'node:http';

/** One Server-Sent Event as received. */
export interface SseEvent {
  readonly event: string;
  readonly id: string | undefined;
  readonly data: unknown;
}

/**
 * A raw SSE connection (node:http, so a test can cut it at any moment): the response's status
 * and headers, every event parsed as it arrives, keep-alive comments counted.
 */
export class SseClient {
  readonly events: SseEvent[] = [];
  comments = 0;
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  body = '';
  private buffer = '';
  private waiters: (() => void)[] = [];
  private request: http.ClientRequest | undefined;
  ended = false;

  static open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const client = new SseClient();
    return new Promise((resolve, reject) => {
      client.request = http.get(
        url,
        { headers: { accept: 'text/event-stream', ...headers } },
        (response) => {
          client.status = response.statusCode ?? 0;
          client.headers = response.headers;
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            client.take(chunk);
          });
          const finish = () => {
            client.ended = true;
            client.notify();
          };
          response.on('end', finish);
          response.on('close', finish);
          response.on('error', finish);
          resolve(client);
        },
      );
      client.request.on('error', (error) => {
        if (client.status === 0) reject(error);
      });
    });
  }

  /** Waits until `count` events named `name` arrived (or the stream ended). */
  async until(
    predicate: (events: readonly SseEvent[]) => boolean,
    timeoutMs = 20_000,
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.events)) {
      if (this.ended)
        throw new Error(
          `the stream ended first: ${JSON.stringify(this.events.map((e) => e.event))} ${this.body.slice(0, 300)}`,
        );
      if (Date.now() > deadline)
        throw new Error(
          `not within ${timeoutMs} ms: ${JSON.stringify(this.events.map((e) => e.event))}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  named(name: string): SseEvent[] {
    return this.events.filter((event) => event.event === name);
  }

  /** Cuts the connection, as a client that goes away. */
  destroy(): void {
    this.request?.destroy();
  }

  async untilEnded(timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended) {
      if (Date.now() > deadline) throw new Error(`the stream did not end within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  private take(chunk: string): void {
    this.body += chunk;
    this.buffer += chunk;
    for (let end = this.buffer.indexOf('\n\n'); end !== -1; end = this.buffer.indexOf('\n\n')) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let name = 'message';
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) this.comments += 1;
        else if (line.startsWith('event: ')) name = line.slice(7);
        else if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length > 0) this.events.push({ event: name, id, data: JSON.parse(data.join('\n')) });
    }
    this.notify();
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
