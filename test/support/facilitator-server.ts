import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './close-server.js';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';

/** How the facilitator answers: properly, or like one that is down or stuck. */
export type FacilitatorMode = 'up' | 'error-page' | 'hang' | 'refuse';

/**
 * A facilitator speaking the x402 facilitator HTTP API (`/supported`, `/verify`, `/settle`)
 * on loopback, backed by a real facilitator settling on the local chain. Used to test the
 * `remote` mode for real, and what clients see when the facilitator goes away.
 */
export class FacilitatorServer {
  mode: FacilitatorMode = 'up';
  /** Which calls the mode applies to: all of them, or only /settle (the facilitator fails mid-sale). */
  scope: 'all' | 'settle' = 'all';
  readonly calls: string[] = [];
  private readonly hanging = new Set<ServerResponse>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly facilitator: FacilitatorClient,
  ) {}

  static async start(facilitator: FacilitatorClient): Promise<FacilitatorServer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const instance = new FacilitatorServer(server, `http://127.0.0.1:${port}`, facilitator);
    server.on('request', (request, response) => {
      void instance.handle(request, response);
    });
    return instance;
  }

  close(): Promise<void> {
    return closeServer(this.server, this.hanging);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '/').replace(/\/+$/, '');
    this.calls.push(`${request.method ?? 'GET'} ${path}`);
    const mode = this.scope === 'all' || path === '/settle' ? this.mode : 'up';
    if (mode === 'refuse') {
      request.socket.destroy();
      return;
    }
    if (mode === 'hang') {
      this.hanging.add(response);
      return;
    }
    if (mode === 'error-page') {
      response.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>');
      return;
    }
    try {
      const body = await this.answer(path, request);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    } catch (error) {
      response
        .writeHead(500, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: String(error) }));
    }
  }

  private async answer(path: string, request: IncomingMessage): Promise<unknown> {
    if (path === '/supported') return this.facilitator.getSupported();
    const { paymentPayload, paymentRequirements } = (await readJson(request)) as {
      paymentPayload: PaymentPayload;
      paymentRequirements: PaymentRequirements;
    };
    if (path === '/verify') return this.facilitator.verify(paymentPayload, paymentRequirements);
    if (path === '/settle') return this.facilitator.settle(paymentPayload, paymentRequirements);
    throw new Error(`unknown path ${path}`);
  }
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}
