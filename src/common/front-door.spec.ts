import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import Fastify, { type FastifyInstance } from 'fastify';
import { request as httpRequest, type ServerResponse } from 'node:http';
import { connect, Server } from 'node:net';
import { Registry } from 'prom-client';
import { HttpAnswers } from '../metrics/http-answers.js';
import { MemoryThrottlerStorage } from '../rate-limit/memory-throttler-storage.js';
import { RateLimiter } from '../rate-limit/rate-limit.guard.js';
import { CORS_HEADERS_WITHOUT_ORIGIN } from './cors.js';
import type { PreparedAnswer } from './fast-answers.js';
import { clientAddressOf, FrontDoor, warmUpLogged } from './front-door.js';

const BODY = '{"count":1,"assets":[{"symbol":"BTC","quote":"USD"}]}';
const ANSWER: PreparedAnswer = {
  status: 200,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: BODY,
};

interface Doorway {
  readonly server: FastifyInstance;
  readonly door: FrontDoor;
  readonly url: string;
  readonly storage: MemoryThrottlerStorage;
  readonly registry: Registry;
  /** Requests Fastify saw (its onRequest hook ran for them). */
  readonly reachedFastify: string[];
}

/**
 * Fastify on the door's server: `/door` is a route whose constant answer the door serves and whose
 * handler (the whole way) answers 299, or 429 when the limiter refuses the request.
 */
async function doorway(freeLimit = 0): Promise<Doorway> {
  const door = new FrontDoor();
  const server = Fastify({ serverFactory: door.serverFactory });
  const storage = new MemoryThrottlerStorage();
  const limiter = new RateLimiter(storage, {
    windowMs: 60_000,
    free: freeLimit,
    unpaid: 0,
    trustProxy: false,
  });
  const reachedFastify: string[] = [];
  server.addHook('onRequest', (request, _reply, done) => {
    reachedFastify.push(`${request.method} ${request.url}`);
    done();
  });
  server.all('/door', async (request, reply) => {
    const refusal = await limiter.verdict(request, false);
    return reply.code(refusal === undefined ? 299 : 429).send('whole way');
  });
  const registry = new Registry();
  door.serve([{ url: '/door', paid: false, answer: () => ANSWER, constant: ANSWER }], {
    limiter,
    answers: new HttpAnswers(registry),
    trustProxy: false,
  });
  const address = await server.listen({ port: 0, host: '127.0.0.1' });
  return { server, door, url: `${address}/door`, storage, registry, reachedFastify };
}

/** How many GET 200s the door's metrics series for `/door` counted. */
async function countedAnswers(registry: Registry): Promise<number> {
  const metric = await registry.getSingleMetric('http_requests_total')?.get();
  const series = metric?.values.find(
    (value) =>
      value.labels['route'] === '/door' &&
      value.labels['method'] === 'GET' &&
      value.labels['status'] === '200',
  );
  return series?.value ?? 0;
}

/**
 * Listening TCP servers in this process (sockets are not counted: other tests' kept-alive
 * connections close at their own pace).
 */
function listeningServers(): number {
  return process.getActiveResourcesInfo().filter((name) => name === 'TCPServerWrap').length;
}

/** A GET carrying a body (`fetch` refuses to send one). */
function getWithBody(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: 'GET', headers: { 'content-length': '2' } });
    request.on('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
    request.end('{}');
  });
}

describe('the front door', () => {
  let open: Doorway | undefined;

  afterEach(async () => {
    jest.restoreAllMocks();
    await open?.server.close();
    open?.storage.onApplicationShutdown();
    open = undefined;
  });

  async function started(freeLimit?: number): Promise<Doorway> {
    open = await doorway(freeLimit);
    return open;
  }

  it('answers a plain GET of the exact URL itself: the answer, its headers, counted, Fastify untouched', async () => {
    const { url, registry, reachedFastify } = await started();
    const response = await fetch(url, { headers: { 'x-request-id': 'abc-1' } });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(BODY);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(BODY)));
    expect(response.headers.get('x-request-id')).toBe('abc-1');
    for (const [name, value] of Object.entries(CORS_HEADERS_WITHOUT_ORIGIN)) {
      expect(response.headers.get(name)).toBe(value);
    }
    expect(reachedFastify).toEqual([]);
    expect(await countedAnswers(registry)).toBe(1);
  });

  it('gives a request without a usable id a new UUID', async () => {
    const { url } = await started();
    const response = await fetch(url, { headers: { 'x-request-id': 'not plain!' } });
    expect(response.headers.get('x-request-id')).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    );
  });

  it.each([
    ['a HEAD', '', { method: 'HEAD' }],
    ['another URL form (a query)', '?x=1', {}],
    ['a browser (Origin)', '', { headers: { origin: 'https://wallet.example' } }],
    ['another method', '', { method: 'POST' }],
  ])('hands %s on to Fastify', async (_case, suffix, init: RequestInit) => {
    const { url, registry, reachedFastify } = await started();
    const response = await fetch(`${url}${suffix}`, init);
    expect(response.status).toBe(299);
    expect(reachedFastify).toHaveLength(1);
    expect(await countedAnswers(registry)).toBe(0);
  });

  it('hands a GET that carries a body on to Fastify', async () => {
    const { url, reachedFastify } = await started();
    expect(await getWithBody(url)).toBe(299);
    expect(reachedFastify).toEqual(['GET /door']);
  });

  it('hands everything on once closed: Fastify answers as it closes', async () => {
    const { url, door, reachedFastify } = await started();
    door.close();
    expect((await fetch(url)).status).toBe(299);
    expect(reachedFastify).toEqual(['GET /door']);
  });

  it("counts each request once in the rate limit, and hands a refused one on to Fastify's 429", async () => {
    const { url, storage, reachedFastify } = await started(2);
    const increments = jest.spyOn(storage, 'increment');
    const statuses = [];
    for (let index = 0; index < 3; index += 1) statuses.push((await fetch(url)).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect(reachedFastify).toEqual(['GET /door']);
    expect(increments).toHaveBeenCalledTimes(3);
  });

  it('neither writes nor counts an answer whose client left while the rate limit counted it', async () => {
    const { url, server, storage, registry, reachedFastify } = await started(5);
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const increment = storage.increment.bind(storage);
    const counting = new Promise<void>((resolve) => {
      jest.spyOn(storage, 'increment').mockImplementation(async (...args) => {
        resolve();
        await gate;
        return increment(...args);
      });
    });
    const responseClosed = new Promise<ServerResponse>((resolve) => {
      server.server.once('request', (_request, response: ServerResponse) => {
        response.once('close', () => {
          resolve(response);
        });
      });
    });
    const { port } = new URL(url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write('GET /door HTTP/1.1\r\nHost: door\r\n\r\n');
    await counting;
    socket.destroy();
    const response = await responseClosed;
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(response.headersSent).toBe(false);
    expect(await countedAnswers(registry)).toBe(0);
    expect(reachedFastify).toEqual([]);
  });

  it('hands the request on when writing the answer throws before anything was sent', async () => {
    const { url, server, registry } = await started();
    server.server.prependOnceListener('request', (_request, response: ServerResponse) => {
      const writeHead = response.writeHead.bind(response);
      response.writeHead = (): never => {
        response.writeHead = writeHead;
        throw new Error('refused by Node');
      };
    });
    const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
    expect(response.status).toBe(299);
    expect(await countedAnswers(registry)).toBe(0);
  });

  it('ends the connection when writing the answer throws after its headers went out', async () => {
    const { url, server, registry, reachedFastify } = await started();
    server.server.prependOnceListener('request', (_request, response: ServerResponse) => {
      response.end = (): never => {
        throw new Error('refused by Node');
      };
    });
    const failure = await fetch(url, { signal: AbortSignal.timeout(5000) })
      .then((response) => response.text())
      .then(
        () => 'answered',
        (error: unknown) => error,
      );
    // the connection was ended (a network error), not left hanging (an abort at the time-out)
    expect(failure).toHaveProperty('name', 'TypeError');
    expect(reachedFastify).toEqual([]);
    expect(await countedAnswers(registry)).toBe(0);
    // the server still answers
    expect((await fetch(url)).status).toBe(200);
  });

  it('sets up the server as Fastify would: its time-outs and keep-alive', async () => {
    const door = new FrontDoor();
    const server = Fastify({
      serverFactory: door.serverFactory,
      keepAliveTimeout: 1234,
      requestTimeout: 5678,
      connectionTimeout: 9012,
    });
    await server.ready();
    expect(server.server.keepAliveTimeout).toBe(1234);
    expect(server.server.requestTimeout).toBe(5678);
    expect(server.server.timeout).toBe(9012);
    await server.close();
  });

  it('refuses to build an HTTP/2 or TLS server', () => {
    const door = new FrontDoor();
    expect(() => door.serverFactory(() => undefined, { http2: true })).toThrow(/HTTP\/1\.1 only/);
    expect(() => door.serverFactory(() => undefined, { https: {} })).toThrow(/HTTP\/1\.1 only/);
  });

  it('refuses a paid route: a payment changes its answer', () => {
    const door = new FrontDoor();
    const limiter = new RateLimiter(new MemoryThrottlerStorage(), {
      windowMs: 60_000,
      free: 0,
      unpaid: 0,
      trustProxy: false,
    });
    const route = { url: '/paid', paid: true, answer: () => ANSWER, constant: ANSWER };
    expect(() => {
      door.serve([route], { limiter, answers: new HttpAnswers(new Registry()), trustProxy: false });
    }).toThrow(/paid route/);
  });

  it('warms up on a private server: every request answered, none rate limited, counted or seen by Fastify', async () => {
    const { door, url, registry, reachedFastify } = await started(2);
    const servers = listeningServers();
    expect(await door.warmUp(300, 5000)).toEqual({ answered: 300 });
    expect(listeningServers()).toBe(servers);
    expect(reachedFastify).toEqual([]);
    expect(await countedAnswers(registry)).toBe(0);
    // the limit of two per window is untouched: the first two requests get the door's answer
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(url)).status).toBe(429);
    expect(await countedAnswers(registry)).toBe(2);
  });

  it('warms up nothing when asked for none, or when it serves no constant answer', async () => {
    const { door } = await started();
    expect(await door.warmUp(0, 5000)).toEqual({ answered: 0 });
    const empty = new FrontDoor();
    const server = Fastify({ serverFactory: empty.serverFactory });
    await server.ready();
    const servers = listeningServers();
    expect(await empty.warmUp(100, 5000)).toEqual({ answered: 0 });
    expect(listeningServers()).toBe(servers);
    await server.close();
  });

  it('reports why a warm-up could not run, leaves nothing open, and the app starts with a warning', async () => {
    const { door } = await started();
    const servers = listeningServers();
    jest.spyOn(Server.prototype, 'listen').mockImplementationOnce(function (this: Server) {
      const error = Object.assign(new Error('listen EADDRNOTAVAIL'), { code: 'EADDRNOTAVAIL' });
      process.nextTick(() => this.emit('error', error));
      return this;
    });
    const warned = jest.spyOn(Logger, 'warn').mockImplementation(() => undefined);
    await warmUpLogged(door, 100);
    expect(warned).toHaveBeenCalledWith(
      expect.stringMatching(/^Response path warm-up cut short \(EADDRNOTAVAIL\): 0 of 100 answers/),
      'FrontDoor',
    );
    expect(listeningServers()).toBe(servers);
  });
});

describe('clientAddressOf', () => {
  // the connection comes from 127.0.0.1 and names 203.0.113.7, then 10.1.2.3, as forwarders
  it.each([
    ['no proxy trusted', false, '127.0.0.1'],
    ['every proxy trusted', true, '203.0.113.7'],
    ['the loopback proxy trusted', ['127.0.0.1'], '10.1.2.3'],
    ['a CIDR that is not the proxy', ['10.0.0.0/8'], '127.0.0.1'],
    ['loopback and the first forwarder', ['127.0.0.0/8', '10.0.0.0/8'], '203.0.113.7'],
  ] as const)("gives Fastify's request.ip with %s", async (_case, trustProxy, client) => {
    const server = Fastify({
      trustProxy: typeof trustProxy === 'boolean' ? trustProxy : [...trustProxy],
    });
    const addressOf = clientAddressOf(trustProxy);
    server.get('/', (request) => ({ fastify: request.ip, door: addressOf(request.raw) }));
    const url = await server.listen({ port: 0, host: '127.0.0.1' });
    try {
      const response = await fetch(url, {
        headers: { 'x-forwarded-for': '203.0.113.7, 10.1.2.3' },
      });
      const { fastify, door } = (await response.json()) as { fastify: string; door: string };
      expect(fastify).toBe(client);
      expect(door).toBe(fastify);
    } finally {
      await server.close();
    }
  });
});
