import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './close-server.js';

/** How a fake venue answers one path: a recorded body, or one of the ways venues misbehave. */
export type VenueBehaviour =
  | { readonly kind: 'json'; readonly body: () => unknown }
  | {
      readonly kind: 'raw';
      readonly status: number;
      readonly body: string;
      readonly contentType?: string;
      readonly headers?: Readonly<Record<string, string>>;
    }
  | { readonly kind: 'hang' }
  | { readonly kind: 'hang-mid-body'; readonly prefix: string }
  | { readonly kind: 'reset' };

/** Requests a set of venues are answering at once, of the paths it counts: now and at most. */
export class InFlightGauge {
  now = 0;
  peak = 0;

  constructor(readonly counts: (path: string) => boolean) {}

  enter(): void {
    this.now += 1;
    this.peak = Math.max(this.peak, this.now);
  }

  leave(): void {
    this.now -= 1;
  }
}

/**
 * A venue on loopback: answers each path (with its query) as told and records every request.
 * Unknown paths get a 404, as a real venue would.
 */
export class FakeVenue {
  readonly requests: string[] = [];
  /** The Authorization header of each request, in order (undefined when absent). */
  readonly authorizations: (string | undefined)[] = [];
  /** Every answer waits this long first: a slow venue. */
  delayMs = 0;
  /** Counts this venue's requests from arrival until their connection's answer is over. */
  gauge: InFlightGauge | undefined;
  private readonly behaviours = new Map<string, VenueBehaviour>();
  /** Paths answered by what their request asks (a candle range), by path prefix. */
  private readonly prefixes = new Map<string, (url: URL) => VenueBehaviour>();
  private readonly hanging = new Set<ServerResponse>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(
    behaviours: Readonly<Record<string, VenueBehaviour>> = {},
  ): Promise<FakeVenue> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const venue = new FakeVenue(server, `http://127.0.0.1:${port}`);
    server.on('request', (request, response) => {
      venue.handle(request, response);
    });
    for (const [path, behaviour] of Object.entries(behaviours)) venue.on(path, behaviour);
    return venue;
  }

  on(pathAndQuery: string, behaviour: VenueBehaviour): this {
    this.behaviours.set(pathAndQuery, behaviour);
    return this;
  }

  /** Answers every path starting with `prefix` (and not set with `on`) as `answer` says for it. */
  onPrefix(prefix: string, answer: (url: URL) => VenueBehaviour): this {
    this.prefixes.set(prefix, answer);
    return this;
  }

  close(): Promise<void> {
    return closeServer(this.server, this.hanging);
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const path = request.url ?? '/';
    this.requests.push(path);
    this.authorizations.push(request.headers.authorization);
    const gauge = this.gauge;
    if (gauge?.counts(path) === true) {
      gauge.enter();
      response.once('close', () => {
        gauge.leave();
      });
    }
    if (this.delayMs === 0) {
      this.answer(path, request, response);
      return;
    }
    this.hanging.add(response);
    const timer = setTimeout(() => {
      this.hanging.delete(response);
      if (!response.destroyed) this.answer(path, request, response);
    }, this.delayMs);
    response.on('close', () => {
      clearTimeout(timer);
    });
  }

  private answer(path: string, request: IncomingMessage, response: ServerResponse): void {
    const behaviour = this.behaviours.get(path) ?? this.byPrefix(path);
    if (behaviour === undefined) {
      response
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"message":"not found"}');
      return;
    }
    switch (behaviour.kind) {
      case 'json':
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(behaviour.body()));
        return;
      case 'raw':
        response
          .writeHead(behaviour.status, {
            'content-type': behaviour.contentType ?? 'text/plain',
            ...behaviour.headers,
          })
          .end(behaviour.body);
        return;
      case 'hang':
        this.hanging.add(response);
        return;
      case 'hang-mid-body':
        this.hanging.add(response);
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write(behaviour.prefix);
        return;
      case 'reset':
        request.socket.destroy();
        return;
    }
  }

  private byPrefix(path: string): VenueBehaviour | undefined {
    for (const [prefix, answer] of this.prefixes) {
      if (path.startsWith(prefix)) return answer(new URL(path, this.url));
    }
    return undefined;
  }
}
