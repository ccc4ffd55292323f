import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  Injectable,
  Module,
  type CanActivate,
  type ExecutionContext,
  type MiddlewareConsumer,
  type NestMiddleware,
  type NestModule,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { startPaidApp, type PaidApp } from './support/paid-app.js';

/** One request as an extension saw it; `paid` when it carried an x402 payment header. */
interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly paid: boolean;
}

type Headers = IncomingMessage['headers'];

function seen(method: string | undefined, url: string | undefined, headers: Headers): SeenRequest {
  const paid = headers['payment-signature'] !== undefined || headers['x-payment'] !== undefined;
  return { method: method ?? '', url: url ?? '', paid };
}

/** What the extension's middleware and guard each recorded, in arrival order. */
@Injectable()
class RequestLog {
  readonly middleware: SeenRequest[] = [];
  readonly guard: SeenRequest[] = [];

  clear(): void {
    this.middleware.length = 0;
    this.guard.length = 0;
  }
}

/** On Fastify a Nest middleware gets Node's request; `originalUrl` keeps the path Nest matched. */
@Injectable()
class RecordingMiddleware implements NestMiddleware<IncomingMessage, ServerResponse> {
  constructor(private readonly log: RequestLog) {}

  use(request: IncomingMessage & { originalUrl?: string }, _: ServerResponse, next: () => void) {
    this.log.middleware.push(
      seen(request.method, request.originalUrl ?? request.url, request.headers),
    );
    next();
  }
}

@Injectable()
class RecordingGuard implements CanActivate {
  constructor(private readonly log: RequestLog) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    this.log.guard.push(seen(request.method, request.url, request.headers));
    return true;
  }
}

/** An extension as a team would add one: a global middleware and a global guard. */
@Module({
  providers: [RequestLog, { provide: APP_GUARD, useClass: RecordingGuard }],
})
class RecordingModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // path-to-regexp 8 (Nest 11+): a named wildcard; the braces let it match "/" too
    consumer.apply(RecordingMiddleware).forRoutes('{*splat}');
  }
}

describe('one Nest pipeline: a global middleware and a global guard see every request', () => {
  let stack: PaidApp;
  let log: RequestLog;

  beforeAll(async () => {
    stack = await startPaidApp({ features: [RecordingModule] });
    log = stack.service.app.get(RequestLog);
  });

  beforeEach(() => {
    log.clear();
  });

  afterAll(async () => {
    await stack.close();
  });

  function expectBothSaw(requests: SeenRequest[]): void {
    expect(log.middleware).toEqual(requests);
    expect(log.guard).toEqual(requests);
  }

  it('the free asset list', async () => {
    const response = await stack.service.get('/v1/assets');
    expect(response.status).toBe(200);
    expectBothSaw([{ method: 'GET', url: '/v1/assets', paid: false }]);
  });

  it('an unpaid request to a paid route, answered 402', async () => {
    const response = await stack.service.get('/v1/ticker/BTC');
    expect(response.status).toBe(402);
    expectBothSaw([{ method: 'GET', url: '/v1/ticker/BTC', paid: false }]);
  });

  it('a request the official client pays for, answered 200 (after its own unpaid try)', async () => {
    const response = await stack.buyer.fetchV2(`${stack.service.url}/v1/ticker/BTC`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ currency: 'USD' });
    expectBothSaw([
      { method: 'GET', url: '/v1/ticker/BTC', paid: false },
      { method: 'GET', url: '/v1/ticker/BTC', paid: true },
    ]);
  });

  it('a refused request: an unknown symbol, answered 404 before any payment is asked', async () => {
    const response = await stack.service.get('/v1/ticker/NOPE');
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ status: 404, code: 'unknown_symbol' });
    expectBothSaw([{ method: 'GET', url: '/v1/ticker/NOPE', paid: false }]);
  });

  it('a query string reaches both as sent', async () => {
    const response = await stack.service.get('/v1/assets?page=1');
    expect(response.status).toBe(200);
    expectBothSaw([{ method: 'GET', url: '/v1/assets?page=1', paid: false }]);
  });
});
