import { jest } from '@jest/globals';
import { Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FrontDoor } from '../src/common/front-door.js';
import { TickerRequestGuard } from '../src/tickers/ticker-request.guard.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { startApp, type RunningApp } from './support/test-app.js';

/** Headers that differ between any two answers of one server. */
const PER_ANSWER = new Set(['date', 'keep-alive', 'connection']);

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** The answer with the server's own address written as `ORIGIN` (the 402 names its resource URL). */
async function answerOf(
  app: RunningApp,
  path: string,
  headers: Record<string, string>,
): Promise<Answer> {
  const response = await app.get(path, { headers });
  const origin = new URL(app.url).origin;
  const neutral = (text: string): string => text.split(origin).join('ORIGIN');
  const kept: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (PER_ANSWER.has(name)) return;
    kept[name] =
      name === 'payment-required'
        ? Buffer.from(neutral(Buffer.from(value, 'base64').toString('utf8'))).toString('base64')
        : value;
  });
  return { status: response.status, headers: kept, body: neutral(await response.text()) };
}

/** The /v1 series of the request and payment counters, as scraped. */
async function counted(app: RunningApp): Promise<string[]> {
  const text = await (await app.get('/metrics')).text();
  return text
    .split('\n')
    .filter((line) => /^(http_requests_total|x402_payments_total)\{.*"\/v1\//.test(line));
}

/**
 * The prepared answers (common/fast-answers.ts) are sent before Nest's pipeline: the same app
 * with them off (every request through Nest's guards, handler and exception filter) must give
 * the same answers (status, every header value but the per-connection ones, body), and count
 * them the same.
 */
describe('prepared answers equal what the Nest pipeline answers', () => {
  let stack: PaidApp;
  let plain: RunningApp;

  beforeAll(async () => {
    stack = await startPaidApp();
    plain = await startApp(
      {
        ...stack.markets.env(),
        X402_RPC_URL: stack.chain.rpcUrl,
        X402_SETTLER_PRIVATE_KEY: stack.chain.accounts[0]!,
      },
      [],
      { preparedAnswers: false },
    );
    await plain.refresh();
  });

  afterAll(async () => {
    await plain.close();
    await stack.close();
  });

  const CASES: readonly (readonly [string, Record<string, string>])[] = [
    ['/v1/assets', {}],
    ['/v1/assets', { origin: 'https://wallet.example' }],
    ['/v1/assets?x=1', {}],
    ['/v1/ticker/BTC', {}],
    ['/v1/ticker/eth', { origin: 'https://wallet.example' }],
    ['/v1/tickers/BTC,ETH', {}],
    ['/v1/all-tickers', {}],
    // refusals: the prepared path hands them to Nest
    ['/v1/ticker/NOPE', {}],
    ['/v1/ticker/B$C', {}],
    ['/v1/tickers/BTC', {}],
    ['/v1/ticker/BTC', { 'payment-signature': 'not-base64!' }],
    ['/v1/ticker/BTC', { 'x-payment': 'e30=' }],
  ];

  it.each(CASES)('GET %s %j', async (path, headers) => {
    const id = {
      'x-request-id': `case-${String(CASES.findIndex(([p, h]) => p === path && h === headers))}`,
    };
    const prepared = await answerOf(stack.service, path, { ...headers, ...id });
    const throughNest = await answerOf(plain, path, { ...headers, ...id });
    expect(prepared).toEqual(throughNest);
  });

  it('counts every answer in the same series (requests by route and status, 402 challenges)', async () => {
    for (const [path, headers] of CASES) {
      await stack.service.get(path, { headers });
      await plain.get(path, { headers });
    }
    const [prepared, throughNest] = [await counted(stack.service), await counted(plain)];
    expect(prepared).toEqual(throughNest);
    expect(prepared).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^http_requests_total\{method="GET",route="\/v1\/assets",status="200"\} 6$/,
        ),
        expect.stringMatching(
          /^x402_payments_total\{route="\/v1\/ticker\/:symbol",outcome="challenged",reason=""\} 4$/,
        ),
      ]),
    );
  });

  it('answers an unpaid ticker request before Nest: no guard runs for it', async () => {
    const preparedGuard = jest.spyOn(stack.service.app.get(TickerRequestGuard), 'canActivate');
    const plainGuard = jest.spyOn(plain.app.get(TickerRequestGuard), 'canActivate');
    expect((await stack.service.get('/v1/ticker/BTC')).status).toBe(402);
    expect((await plain.get('/v1/ticker/BTC')).status).toBe(402);
    expect(preparedGuard).not.toHaveBeenCalled();
    expect(plainGuard).toHaveBeenCalledTimes(1);
    // a refusal goes through Nest as before
    expect((await stack.service.get('/v1/ticker/NOPE')).status).toBe(404);
    expect(preparedGuard).toHaveBeenCalledTimes(1);
  });
});

/** A feature module whose Fastify response hook notes every URL Fastify itself answered. */
@Module({})
class FastifySeen implements OnModuleInit {
  static readonly urls: string[] = [];

  constructor(private readonly host: HttpAdapterHost) {}

  onModuleInit(): void {
    const fastify = this.host.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('onResponse', (request, _reply, done) => {
      FastifySeen.urls.push(request.url);
      done();
    });
  }
}

describe('the front door (common/front-door.ts) in the app', () => {
  it("gives Node's request one shape whether the door answers it or Fastify routes it", async () => {
    const app = await startApp({}, [FastifySeen]);
    // each request's own properties, in order, once its answer is sent (what V8 keys its shape on)
    const shapes = new Map<string, string[]>();
    app.app.getHttpServer().on('request', (request: IncomingMessage, response: ServerResponse) => {
      response.on('finish', () => {
        shapes.set(request.url ?? '', Reflect.ownKeys(request).map(String));
      });
    });
    try {
      // the exact URL is the door's; a query, or an unknown path, goes through Fastify
      expect((await app.get('/v1/assets')).status).toBe(200);
      expect((await app.get('/v1/assets?via=fastify')).status).toBe(200);
      expect((await app.get('/v1/nothing-here')).status).toBe(404);
    } finally {
      await app.close();
    }
    // the door answered the exact URL itself: Fastify never saw it
    expect(FastifySeen.urls).toEqual(['/v1/assets?via=fastify', '/v1/nothing-here']);
    const door = shapes.get('/v1/assets');
    expect(door).toEqual(expect.arrayContaining(['url', 'method', 'rawHeaders']));
    expect(shapes.get('/v1/assets?via=fastify')).toEqual(door);
    expect(shapes.get('/v1/nothing-here')).toEqual(door);
  });

  it('steps aside when the app closes: from then on Fastify answers every request as it closes', async () => {
    const closed = jest.spyOn(FrontDoor.prototype, 'close');
    const app = await startApp();
    try {
      expect((await app.get('/v1/assets')).status).toBe(200);
      expect(closed).not.toHaveBeenCalled();
    } finally {
      await app.close();
    }
    expect(closed).toHaveBeenCalledTimes(1);
    closed.mockRestore();
  });
});
