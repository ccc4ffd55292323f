import { createServer, type Server, type Socket } from 'node:net';
import { askOverKeptAliveConnections } from './kept-alive-asker.js';

const OK = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello';

interface RawServer {
  readonly port: number;
  /** Requests received, by connection. */
  readonly requests: number[];
  close(): Promise<void>;
}

/**
 * A TCP server reading requests (no bodies) and answering each with `answer(n)`, n counting the
 * requests of all connections from 1; `undefined` closes that connection instead.
 */
async function rawServer(
  answer: (n: number) => string | undefined,
  write: (socket: Socket, bytes: string) => void = (socket, bytes) => socket.write(bytes),
): Promise<RawServer> {
  const requests: number[] = [];
  const sockets = new Set<Socket>();
  let seen = 0;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    const index = requests.push(0) - 1;
    let pending = '';
    socket.on('data', (chunk) => {
      pending += chunk.toString('latin1');
      let end: number;
      while ((end = pending.indexOf('\r\n\r\n')) !== -1) {
        pending = pending.slice(end + 4);
        requests[index] = (requests[index] ?? 0) + 1;
        seen += 1;
        const bytes = answer(seen);
        if (bytes === undefined) socket.destroy();
        else write(socket, bytes);
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    requests,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((closed) => server.close(closed));
    },
  };
}

describe('askOverKeptAliveConnections', () => {
  let server: RawServer | undefined;

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const plan = (port: number, requests: number, connections = 4) => ({
    port,
    path: '/v1/assets',
    requests,
    connections,
    timeoutMs: 5000,
  });

  it('sends every request over kept-alive connections, one at a time on each, and counts the 200s', async () => {
    server = await rawServer(() => OK);
    expect(await askOverKeptAliveConnections(plan(server.port, 103))).toBe(103);
    expect(server.requests).toHaveLength(4);
    expect(server.requests.reduce((sum, n) => sum + n, 0)).toBe(103);
  });

  it('opens no more connections than requests, and none for no request', async () => {
    server = await rawServer(() => OK);
    expect(await askOverKeptAliveConnections(plan(server.port, 2, 4))).toBe(2);
    expect(server.requests).toEqual([1, 1]);
    expect(await askOverKeptAliveConnections(plan(server.port, 0))).toBe(0);
    expect(server.requests).toHaveLength(2);
  });

  it('reads answers that arrive a byte at a time', async () => {
    server = await rawServer(
      () => OK,
      (socket, bytes) => {
        socket.setNoDelay(true);
        let at = 0;
        const next = (): void => {
          if (at === bytes.length || socket.destroyed) return;
          socket.write(bytes.charAt(at));
          at += 1;
          setImmediate(next);
        };
        next();
      },
    );
    expect(await askOverKeptAliveConnections(plan(server.port, 20, 2))).toBe(20);
  });

  it('asks nothing more on a connection answered anything but 200', async () => {
    server = await rawServer((n) =>
      n === 3 ? 'HTTP/1.1 429 Too Many Requests\r\nContent-Length: 0\r\n\r\n' : OK,
    );
    expect(await askOverKeptAliveConnections(plan(server.port, 10, 1))).toBe(2);
    expect(server.requests).toEqual([3]);
  });

  it('counts what was answered before the server closed the connection', async () => {
    server = await rawServer((n) => (n <= 4 ? OK : undefined));
    expect(await askOverKeptAliveConnections(plan(server.port, 10, 1))).toBe(4);
  });

  it('gives up at its time-out with the answers so far', async () => {
    server = await rawServer((n) => (n <= 3 ? OK : ''));
    const since = Date.now();
    const answered = await askOverKeptAliveConnections({
      ...plan(server.port, 10, 1),
      timeoutMs: 300,
    });
    expect(answered).toBe(3);
    expect(Date.now() - since).toBeGreaterThanOrEqual(290);
    expect(Date.now() - since).toBeLessThan(3000);
  });

  it('answers 0 when nothing listens', async () => {
    server = await rawServer(() => OK);
    const port = server.port;
    await server.close();
    server = undefined;
    expect(await askOverKeptAliveConnections(plan(port, 5))).toBe(0);
  });
});
