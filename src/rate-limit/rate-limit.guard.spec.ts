import { once } from 'node:events';
import { EventEmitter } from 'node:events';
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

describe('RateLimiter: a payment whose client hangs up counts', () => {
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
        const sale = { ...WITH_PAYMENT, x402Sale: {} } as unknown as FastifyRequest;
        // as the pipeline runs: the verdict, the payment guard's sale, the answer
        void limiter
          .verdict(sale, true, { raw: response } as FastifyReply)
          .then(() => limiter.saleOpened(sale))
          .then(() => response.end('{}'));
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

/** A reply the test answers itself: status, then the whole answer out and the connection closed. */
class TestReply {
  readonly raw = Object.assign(new EventEmitter(), {
    closed: false,
    writableFinished: false,
    statusCode: 200,
  });

  get reply(): FastifyReply {
    return this as unknown as FastifyReply;
  }

  answer(status: number): void {
    Object.assign(this.raw, { statusCode: status, writableFinished: true, closed: true });
    this.raw.emit('close');
  }
}

const FROM = '198.51.100.4';
const UNPAID = { ip: FROM, headers: {} } as FastifyRequest;
const junk = (): FastifyRequest =>
  ({ ip: FROM, headers: { 'x-payment': 'junk' } }) as unknown as FastifyRequest;

describe('RateLimiter on paid routes: only what buys nothing counts', () => {
  let storage: MemoryThrottlerStorage;
  let limiter: RateLimiter;

  beforeEach(() => {
    storage = new MemoryThrottlerStorage();
    limiter = new RateLimiter(storage, { ...SETTINGS, unpaid: 2 });
  });

  afterEach(() => {
    storage.onApplicationShutdown();
  });

  /** The verdict on a request carrying a payment, then its answer with `status`. */
  async function answered(request: FastifyRequest, status: number): Promise<unknown> {
    const reply = new TestReply();
    const verdict = await limiter.verdict(request, true, reply.reply);
    // the payment guard opened a sale: it tells the limiter (x402SaleOpened) before the handler
    if (verdict === undefined && (request as { x402Sale?: object }).x402Sale !== undefined) {
      await limiter.saleOpened(request);
    }
    if (verdict === undefined) reply.answer(status);
    await settled();
    return verdict;
  }

  /** A payment the payment guard verified and claimed (it marks the request so), answered `status`. */
  function sale(status = 200): Promise<unknown> {
    return answered({ ...junk(), x402Sale: {} } as unknown as FastifyRequest, status);
  }

  it('a client that pays each 402 it gets is never limited', async () => {
    for (let round = 0; round < 50; round += 1) {
      expect(await limiter.verdict(UNPAID, true, OPEN_REPLY)).toBeUndefined();
      expect(await sale()).toBeUndefined();
    }
  });

  it('unpaid requests: RATE_LIMIT_UNPAID, then 429 with Retry-After, payments included', async () => {
    expect(await limiter.verdict(UNPAID, true, OPEN_REPLY)).toBeUndefined();
    expect(await limiter.verdict(UNPAID, true, OPEN_REPLY)).toBeUndefined();
    const refusal = await limiter.verdict(UNPAID, true, OPEN_REPLY);
    expect(refusal).toBeInstanceOf(ApiError);
    expect(Number((refusal as ApiError).headers['retry-after'])).toBeGreaterThan(0);
    // over the limit, a payment is refused before anything looks at it
    expect(await answered(junk(), 404)).toBeInstanceOf(ApiError);
    expect(await sale()).toBeInstanceOf(ApiError);
  });

  it.each([400, 402, 404, 409, 503])(
    'a payment header answered %i counts like an unpaid request',
    async (status) => {
      expect(await answered(junk(), status)).toBeUndefined();
      expect(await answered(junk(), status)).toBeUndefined();
      expect(await answered(junk(), status)).toBeUndefined();
      expect(await answered(junk(), status)).toBeInstanceOf(ApiError);
      expect(await limiter.verdict(UNPAID, true, OPEN_REPLY)).toBeInstanceOf(ApiError);
    },
  );

  it('a stored answer sent again (no payment claimed for it) is no sale', async () => {
    await answered(junk(), 200);
    await answered(junk(), 200);
    await answered(junk(), 200);
    expect(await answered(junk(), 200)).toBeInstanceOf(ApiError);
  });

  it('sales give no credit ahead, and never back what was no 402', async () => {
    for (let round = 0; round < 10; round += 1) expect(await sale()).toBeUndefined();
    await answered(junk(), 400);
    await sale();
    expect(await limiter.verdict(UNPAID, true, OPEN_REPLY)).toBeUndefined();
    expect(await limiter.verdict(UNPAID, true, OPEN_REPLY)).toBeInstanceOf(ApiError);
  });

  it('payments count on arrival: concurrent ones past the limit are refused before any is answered', async () => {
    const verdicts = await Promise.all(
      Array.from({ length: 6 }, () => limiter.verdict(junk(), true, new TestReply().reply)),
    );
    // the limit (2), and the payment for the last 402 it allowed; then 429, nothing answered yet
    expect(verdicts.map((verdict) => verdict instanceof ApiError)).toEqual([
      false,
      false,
      false,
      true,
      true,
      true,
    ]);
    expect(await limiter.verdict(UNPAID, true, OPEN_REPLY)).toBeInstanceOf(ApiError);
  });

  it('a sale is counted once: its own count is taken back with the 402 it gives back', async () => {
    const reply = new TestReply();
    const paying = { ...junk(), x402Sale: {} } as unknown as FastifyRequest;
    expect(await limiter.verdict(UNPAID, true, OPEN_REPLY)).toBeUndefined();
    expect(await limiter.verdict(paying, true, reply.reply)).toBeUndefined();
    await limiter.saleOpened(paying);
    // taken back as soon as it is verified: its buyer's next request finds the limit's room
    expect(await limiter.verdict(UNPAID, true, OPEN_REPLY)).toBeUndefined();
    reply.answer(200);
    await settled();
    // the sale gives back one 402: room for one more, then 429
    expect(await limiter.verdict(UNPAID, true, OPEN_REPLY)).toBeUndefined();
    expect(await limiter.verdict(UNPAID, true, OPEN_REPLY)).toBeInstanceOf(ApiError);
  });

  it('a verified payment that sells nothing (settlement refused, client gone) counts again', async () => {
    expect(await sale(402)).toBeUndefined();
    expect(await sale(502)).toBeUndefined();
    // two counted: the limit reached, the next 402 is over it
    expect(await limiter.verdict(UNPAID, true, OPEN_REPLY)).toBeInstanceOf(ApiError);
  });

  it('a sale lifts the limit once its 402 given back brings the count under it', async () => {
    const reply = new TestReply();
    const paying = { ...junk(), x402Sale: {} } as unknown as FastifyRequest;
    expect(await limiter.verdict(paying, true, reply.reply)).toBeUndefined();
    await limiter.saleOpened(paying);
    for (let index = 0; index < 3; index += 1) await limiter.verdict(UNPAID, true, OPEN_REPLY);
    expect(await answered(junk(), 404)).toBeInstanceOf(ApiError);
    // the sale under way when the address went over is answered: 2 of 2 again
    reply.answer(200);
    await settled();
    expect(await answered(junk(), 404)).toBeUndefined();
  });
});
