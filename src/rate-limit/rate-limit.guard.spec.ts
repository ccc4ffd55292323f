import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../common/api-error.js';
import { MemoryThrottlerStorage } from './memory-throttler-storage.js';
import { RateLimiter } from './rate-limit.guard.js';

const SETTINGS = { windowMs: 60_000, free: 0, unpaid: 1, trustProxy: false };
const WITH_PAYMENT = {
  ip: '192.0.2.7',
  headers: { 'payment-signature': 'eyJ4NDAyVmVyc2lvbiI6Mn0=' },
} as unknown as FastifyRequest;
/** A reply still being answered when the verdict is read: the verdict alone is asked of it. */
const OPEN_REPLY = { raw: { closed: false, once: () => undefined } } as unknown as FastifyReply;

/** Real HTTP exchanges: the server hands each response to `onRequest` and never answers itself. */
async function withServer(
  onRequest: (response: ServerResponse) => void,
  body: (port: number) => Promise<void>,
): Promise<void> {
  const server = createServer((_request, response) => {
    onRequest(response);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    await body((server.address() as AddressInfo).port);
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

/** Sends a whole GET, then closes the connection without reading an answer. */
async function sendAndHangUp(port: number): Promise<void> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.write('GET /v1/ticker/BTC HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  await new Promise((resolve) => setTimeout(resolve, 20));
  socket.destroy();
}

async function settled(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
}

describe('RateLimiter: a payment whose client hangs up counts as refused', () => {
  let storage: MemoryThrottlerStorage;
  let limiter: RateLimiter;

  beforeEach(() => {
    storage = new MemoryThrottlerStorage();
    limiter = new RateLimiter(storage, SETTINGS);
  });

  afterEach(() => {
    storage.onApplicationShutdown();
  });

  /** Hangs up twice (the limit is 1), asking the limiter about each exchange per `ask`. */
  async function hangUpTwice(ask: (response: ServerResponse) => void): Promise<void> {
    const asked: Promise<void>[] = [];
    await withServer(
      (response) => {
        asked.push(
          new Promise((resolve) => {
            ask(response);
            response.once('close', () => {
              resolve();
            });
          }),
        );
      },
      async (port) => {
        await sendAndHangUp(port);
        await sendAndHangUp(port);
        while (asked.length < 2) await settled();
        await Promise.all(asked);
      },
    );
    await settled();
  }

  it('when the client left before the limiter saw the request', async () => {
    await hangUpTwice((response) => {
      response.once('close', () => {
        // the 'close' the limiter would have listened for is already over
        expect(response.closed).toBe(true);
        void limiter.verdict(WITH_PAYMENT, true, { raw: response } as FastifyReply);
      });
    });
    expect(await limiter.verdict(WITH_PAYMENT, true, OPEN_REPLY)).toBeInstanceOf(ApiError);
  });

  it('when the client leaves while the payment is checked', async () => {
    await hangUpTwice((response) => {
      expect(response.closed).toBe(false);
      void limiter.verdict(WITH_PAYMENT, true, { raw: response } as FastifyReply);
    });
    expect(await limiter.verdict(WITH_PAYMENT, true, OPEN_REPLY)).toBeInstanceOf(ApiError);
  });

  it('but not when the client stayed for a paid answer', async () => {
    await withServer(
      (response) => {
        void limiter.verdict(WITH_PAYMENT, true, { raw: response } as FastifyReply);
        response.end('{}');
      },
      async (port) => {
        for (let index = 0; index < 2; index += 1) {
          expect((await fetch(`http://127.0.0.1:${String(port)}/`)).status).toBe(200);
        }
      },
    );
    await settled();
    expect(await limiter.verdict(WITH_PAYMENT, true, OPEN_REPLY)).toBeUndefined();
  });
});
