import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './close-server.js';

/**
 * What the proxy does to calls of one JSON-RPC method:
 * - `error-after-forward`: the chain gets the call (a transaction is sent), the caller an error;
 * - `error`: the caller gets an error and the chain never sees the call;
 * - `delay`: forwarded after `ms`;
 * - `silence`: not answered until the faults are cleared (then forwarded) or the proxy closes.
 * An error's `message` is the RPC's own text, as a hostile or broken provider may write it.
 */
export type RpcFault =
  | { readonly kind: 'error-after-forward'; readonly message?: string }
  | { readonly kind: 'error'; readonly message?: string }
  | { readonly kind: 'delay'; readonly ms: number }
  | { readonly kind: 'silence' };

/** A call whose answer the proxy keeps back (see RpcProxy.holdAnswer). */
export interface HeldAnswer {
  /** Resolves once the matching call reached the chain; its answer waits for `release()`. */
  readonly reached: Promise<void>;
  release(): void;
}

/** One JSON-RPC call as the proxy saw it. */
export interface RpcCall {
  readonly method: string;
  readonly params: unknown;
}

/**
 * A JSON-RPC proxy on loopback between the app and anvil that injects errors, delays and
 * silence per method, so a test can break the chain the way real RPC providers break.
 */
export class RpcProxy {
  readonly calls: string[] = [];
  /** Every call as sent: its method and params (a batch's first call). */
  readonly requests: { readonly method: string; readonly params: readonly unknown[] }[] = [];
  private readonly faults = new Map<string, { fault: RpcFault; skip: number }>();
  private readonly silenced = new Map<ServerResponse, string>();
  private hold: { matches: (call: RpcCall) => boolean; held: Held } | undefined;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly target: string,
  ) {}

  static async start(target: string): Promise<RpcProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const proxy = new RpcProxy(server, `http://127.0.0.1:${port}`, target);
    server.on('request', (request, response) => {
      void proxy.handle(request, response);
    });
    return proxy;
  }

  /**
   * Applies `fault` to every call of `method` ('*' for all methods) until cleared; with `skip`,
   * the first `skip` such calls are forwarded faithfully (the second transaction of a round, say).
   */
  fail(method: string, fault: RpcFault, skip = 0): void {
    this.faults.set(method, { fault, skip });
  }

  /**
   * The next call `matches` accepts goes to the chain at once, but its answer reaches the app
   * only on `release()`: whatever the test does meanwhile lands between that call and the app's
   * next one (a gas estimate made before a state change, the transaction sent after it).
   */
  holdAnswer(matches: (call: RpcCall) => boolean): HeldAnswer {
    const held = new Held();
    this.hold = { matches, held };
    return held;
  }

  /**
   * Back to a faithful proxy. Calls held in silence are forwarded now, so work the app gave up
   * on (at a deadline) finishes while the test is still running instead of after it.
   */
  clear(): void {
    this.faults.clear();
    const held = [...this.silenced];
    this.silenced.clear();
    for (const [response, body] of held) void this.forward(body, response);
  }

  close(): Promise<void> {
    this.hold?.held.release();
    return closeServer(this.server, this.silenced.keys());
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readBody(request);
    const { method, id, params } = describe(body);
    this.calls.push(method);
    this.requests.push({ method, params });
    const hold = this.hold;
    if (hold?.matches({ method, params }) === true) {
      this.hold = undefined;
      await this.forward(body, response, undefined, hold.held);
      return;
    }
    const fault = this.faultFor(method);
    if (fault?.kind === 'silence') {
      this.silenced.set(response, body);
      return;
    }
    if (fault?.kind === 'error') {
      reply(response, rpcError(id, fault.message ?? 'injected RPC failure: not forwarded'));
      return;
    }
    if (fault?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.ms));
    await this.forward(
      body,
      response,
      fault?.kind === 'error-after-forward'
        ? (fault.message ?? 'injected RPC failure after the call reached the chain')
        : undefined,
    );
  }

  private faultFor(method: string): RpcFault | undefined {
    const entry = this.faults.get(method) ?? this.faults.get('*');
    if (entry === undefined || entry.skip === 0) return entry?.fault;
    entry.skip -= 1;
    return undefined;
  }

  /**
   * Forwards `body`; with `failAfter`, the caller gets that error once the chain has it; with
   * `held`, the chain's answer once the test releases it.
   */
  private async forward(
    body: string,
    response: ServerResponse,
    failAfter?: string,
    held?: Held,
  ): Promise<void> {
    const { id } = describe(body);
    let forwarded: string;
    try {
      const upstream = await fetch(this.target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      forwarded = await upstream.text();
      if (held !== undefined) await held.reachedChain();
    } catch (error) {
      reply(response, rpcError(id, `upstream unreachable: ${String(error)}`));
      return;
    }
    if (failAfter !== undefined) {
      reply(response, rpcError(id, failAfter));
      return;
    }
    reply(response, forwarded);
  }
}

class Held implements HeldAnswer {
  readonly reached: Promise<void>;
  private arrived!: () => void;
  private released!: () => void;
  private readonly releasing = new Promise<void>((resolve) => {
    this.released = resolve;
  });

  constructor() {
    this.reached = new Promise((resolve) => {
      this.arrived = resolve;
    });
  }

  release(): void {
    this.released();
  }

  /** The call reached the chain: tells the test, then waits for its release. */
  reachedChain(): Promise<void> {
    this.arrived();
    return this.releasing;
  }
}

function describe(body: string): { method: string; id: unknown; params: readonly unknown[] } {
  try {
    const parsed = JSON.parse(body) as
      | { method?: string; id?: unknown; params?: unknown[] }
      | { method?: string; params?: unknown[] }[];
    const first = Array.isArray(parsed) ? parsed[0] : parsed;
    return {
      method: first?.method ?? '?',
      id: Array.isArray(parsed) ? null : parsed.id,
      params: first?.params ?? [],
    };
  } catch {
    return { method: '?', id: null, params: [] };
  }
}

function rpcError(id: unknown, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32603, message } });
}

function reply(response: ServerResponse, body: string): void {
  if (response.destroyed) return;
  response.writeHead(200, { 'content-type': 'application/json' }).end(body);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
