import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  BaseError,
  createPublicClient,
  HttpRequestError,
  InternalRpcError,
  RpcRequestError,
  TimeoutError,
} from 'viem';
import { jsonRpcTransport } from './json-rpc-transport.js';

type Handler = (call: { id: number; method: string }, response: ServerResponse) => void;

/** A JSON-RPC node on a loopback port that answers each call with `handler`. */
async function node(handler: Handler): Promise<{ url: string; server: Server; calls: string[] }> {
  const calls: string[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id: number;
        method: string;
      };
      calls.push(call.method);
      handler(call, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${String(port)}`, server, calls };
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function clientFor(url: string, onRequest?: (method: string, params: unknown) => void) {
  return createPublicClient({
    transport: jsonRpcTransport(url, { timeoutMs: 300, ...(onRequest ? { onRequest } : {}) }),
  });
}

/** The first error of `kind` in the chain viem wrapped around the transport's error. */
async function failure<T extends Error>(
  call: Promise<unknown>,
  kind: abstract new (...args: never[]) => T,
): Promise<T> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(BaseError);
  const inner = (error as BaseError).walk((cause) => cause instanceof kind);
  expect(inner).toBeInstanceOf(kind);
  return inner as T;
}

describe('jsonRpcTransport', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(
      servers.splice(0).map(
        (server) =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => {
              resolve();
            });
          }),
      ),
    );
  });
  async function started(handler: Handler) {
    const running = await node(handler);
    servers.push(running.server);
    return running;
  }

  it('answers with the result, every call on one kept-alive connection', async () => {
    const connections = new Set<unknown>();
    const { url, server, calls } = await started((call, response) => {
      json(response, 200, { jsonrpc: '2.0', id: call.id, result: '0x2a' });
    });
    server.on('connection', (socket) => connections.add(socket));
    const client = clientFor(url);

    for (let i = 0; i < 5; i += 1)
      await expect(client.getBlockNumber({ cacheTime: 0 })).resolves.toBe(42n);

    expect(calls).toEqual(Array(5).fill('eth_blockNumber'));
    expect(connections.size).toBe(1);
  });

  it('does not reuse a connection the node says it will close within a second', async () => {
    const connections = new Set<unknown>();
    const { url, server } = await started((call, response) => {
      response.setHeader('keep-alive', 'timeout=1');
      json(response, 200, { jsonrpc: '2.0', id: call.id, result: '0x2a' });
    });
    server.on('connection', (socket) => connections.add(socket));
    const client = clientFor(url);

    await client.getBlockNumber({ cacheTime: 0 });
    await client.getBlockNumber({ cacheTime: 0 });

    expect(connections.size).toBe(2);
  });

  it('tells onRequest each method before the node sees it', async () => {
    const told: string[] = [];
    const { url, calls } = await started((call, response) => {
      expect(told).toContain(call.method);
      json(response, 200, { jsonrpc: '2.0', id: call.id, result: '0x1' });
    });

    await clientFor(url, (method) => told.push(method)).getChainId();

    expect(told).toEqual(['eth_chainId']);
    expect(calls).toEqual(['eth_chainId']);
  });

  it("reports the node's JSON-RPC error as an RpcRequestError with its code and message", async () => {
    const { url } = await started((call, response) => {
      json(response, 200, {
        jsonrpc: '2.0',
        id: call.id,
        error: { code: -32603, message: 'boom' },
      });
    });

    const error = await failure(clientFor(url).getBlockNumber(), RpcRequestError);

    expect(error.code).toBe(-32603);
    expect(error.message).toContain('boom');
    await failure(clientFor(url).getBlockNumber(), InternalRpcError);
  });

  it('reports an HTTP error status as an HttpRequestError with the status', async () => {
    const { url } = await started((call, response) => {
      json(response, 429, {
        jsonrpc: '2.0',
        id: call.id,
        error: { code: -32005, message: 'slow down' },
      });
    });

    const error = await failure(clientFor(url).getBlockNumber(), HttpRequestError);

    expect(error.status).toBe(429);
    expect(error.details).toContain('slow down');
  });

  it('reports an answer that is not JSON-RPC as an HttpRequestError', async () => {
    const { url } = await started((_call, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html>gateway</html>');
    });

    const error = await failure(clientFor(url).getBlockNumber(), HttpRequestError);

    expect(error.status).toBe(200);
    expect(error.details).toContain('gateway');
  });

  it('reports a node that does not answer in time as a TimeoutError', async () => {
    const { url } = await started(() => {
      // never answers
    });

    await failure(clientFor(url).getBlockNumber(), TimeoutError);
  });

  it('reports a refused connection as an HttpRequestError with its cause', async () => {
    const { url, server } = await started(() => undefined);
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
    });

    const error = await failure(clientFor(url).getBlockNumber(), HttpRequestError);

    expect(error.details).toMatch(/ECONNREFUSED/);
  });

  it('stops reading an answer larger than the limit and reports an HttpRequestError', async () => {
    const padding = 'f'.repeat(64 * 1024);
    const { url } = await started((call, response) => {
      json(response, 200, { jsonrpc: '2.0', id: call.id, result: `0x${padding}` });
    });
    const client = createPublicClient({
      transport: jsonRpcTransport(url, { timeoutMs: 300, maxResponseBytes: 16 * 1024 }),
    });

    const error = await failure(client.getBlockNumber(), HttpRequestError);

    expect(error.details).toBe('answer larger than 16384 bytes');
    expect(error.status).toBe(200);
  });

  it('reports a connection closed mid-answer as an HttpRequestError', async () => {
    const { url } = await started((_call, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      response.write('{"jsonrpc":"2.0",');
      response.socket?.destroy();
    });

    await failure(clientFor(url).getBlockNumber(), HttpRequestError);
  });
});
