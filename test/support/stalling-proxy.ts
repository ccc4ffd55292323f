import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy on loopback in front of a server (Redis): it forwards both ways until `stall()`,
 * then keeps every connection open and takes the client's commands, but holds back the server's
 * answers, as a paused or overloaded server behaves; `resume()` delivers what it held.
 */
export class StallingProxy {
  private stalled = false;
  private readonly held: { client: Socket; data: Buffer }[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<StallingProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new StallingProxy(server, (server.address() as AddressInfo).port);
    server.on('connection', (client) => {
      proxy.relay(client, targetPort);
    });
    return proxy;
  }

  stall(): void {
    this.stalled = true;
  }

  resume(): void {
    this.stalled = false;
    for (const { client, data } of this.held.splice(0)) if (!client.destroyed) client.write(data);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) =>
      this.server.close(() => {
        resolve();
      }),
    );
  }

  private relay(client: Socket, targetPort: number): void {
    const upstream = createConnection(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (data) => upstream.write(data));
    upstream.on('data', (data) => {
      if (this.stalled) this.held.push({ client, data });
      else client.write(data);
    });
  }
}
