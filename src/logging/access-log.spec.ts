import { Logger } from '@nestjs/common';
import Fastify, { type FastifyInstance } from 'fastify';
import { LogLines } from '../../test/support/log-lines.js';
import type { LogLevelName } from '../common/server.settings.js';
import { installAccessLog } from './access-log.js';
import { createLogs } from './log-output.js';
import type { LogFormat } from './logging.settings.js';
import { PinoNestLogger } from './pino-nest-logger.js';
import { requestIdOf } from './request-id.js';
import { noteSale } from './request-log.js';

/** Fastify as createApp builds it for logging, with a route that logs and one that sells. */
async function served(
  format: LogFormat,
  level: LogLevelName = 'log',
): Promise<{ fastify: FastifyInstance; lines: LogLines }> {
  const lines = new LogLines();
  const logs = createLogs({ format, level, destination: lines });
  Logger.overrideLogger(new PinoNestLogger(logs.events));
  const fastify = Fastify({ genReqId: requestIdOf, trustProxy: true });
  installAccessLog(fastify, logs.access, {
    routeOf: (request) =>
      request.url.startsWith('/v1/ticker/') ? '/v1/ticker/:symbol' : undefined,
  });
  fastify.get('/v1/ticker/:symbol', async (_request, reply) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    new Logger('TickersController').log('answering');
    return reply.send({ ok: true });
  });
  fastify.get('/v1/sold/:symbol', async () => {
    await Promise.resolve();
    noteSale({ payer: '0xabc', amount: '2000', network: 'eip155:84532' });
    return { ok: true };
  });
  fastify.get('/fails', async (_request, reply) => reply.code(503).send({ down: true }));
  // a method the path has no route for, as MethodTable answers it
  fastify.setNotFoundHandler(async (request, reply) =>
    reply.code(request.url.startsWith('/v1/ticker/') ? 405 : 404).send({}),
  );
  await fastify.ready();
  return { fastify, lines };
}

describe('installAccessLog', () => {
  afterAll(() => {
    Logger.overrideLogger(true);
  });

  it('ends each request with one access line, and names the request on every line written while serving it', async () => {
    const { fastify, lines } = await served('json');
    const response = await fastify.inject({
      url: '/v1/ticker/BTC?x=1',
      headers: { 'x-request-id': 'req-42', 'x-forwarded-for': '203.0.113.7' },
    });
    expect(response.headers['x-request-id']).toBe('req-42');
    const [inside, access, ...rest] = lines.records();
    expect(rest).toEqual([]);
    expect(inside).toMatchObject({
      requestId: 'req-42',
      context: 'TickersController',
      message: 'answering',
    });
    expect(access).toEqual({
      level: 'log',
      time: expect.any(String) as unknown,
      requestId: 'req-42',
      method: 'GET',
      route: '/v1/ticker/:symbol',
      status: 200,
      durationMs: expect.any(Number) as unknown,
      client: '203.0.113.7',
      message: 'request completed',
    });
  });

  it("puts a sale's payer, amount and network on its access line, and on no other request's", async () => {
    const { fastify, lines } = await served('json');
    await fastify.inject({ url: '/v1/sold/BTC', headers: { 'x-request-id': 'sold-1' } });
    await fastify.inject({
      url: '/v1/sold/BTC'.replace('sold', 'ticker'),
      headers: { 'x-request-id': 'free-1' },
    });
    const access = lines.records().filter((record) => record['message'] === 'request completed');
    expect(access).toEqual([
      expect.objectContaining({
        requestId: 'sold-1',
        route: '/v1/sold/:symbol',
        payer: '0xabc',
        amount: '2000',
        network: 'eip155:84532',
      }),
      expect.not.objectContaining({ payer: expect.anything() as unknown }),
    ]);
  });

  it('answers a request without a plain id with a UUID, on its header and its line; no route is `unmatched`', async () => {
    const { fastify, lines } = await served('json');
    const response = await fastify.inject({ url: '/nowhere', headers: { 'x-request-id': 'a b' } });
    const id = response.headers['x-request-id'];
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(lines.records()).toEqual([
      expect.objectContaining({ requestId: id, route: 'unmatched', status: 404 }),
    ]);
  });

  it("names a 405's route by the lookup, and writes a 5xx's line at warn", async () => {
    const { fastify, lines } = await served('json');
    await fastify.inject({ url: '/fails' });
    await fastify.inject({ method: 'DELETE', url: '/v1/ticker/BTC' });
    expect(lines.records()).toEqual([
      expect.objectContaining({ level: 'warn', route: '/fails', status: 503 }),
      expect.objectContaining({ level: 'log', route: '/v1/ticker/:symbol', status: 405 }),
    ]);
  });

  it('writes no access line at LOG_LEVEL=warn but for a 5xx', async () => {
    const { fastify, lines } = await served('json', 'warn');
    await fastify.inject({ url: '/v1/sold/BTC' });
    await fastify.inject({ url: '/fails' });
    expect(lines.records()).toEqual([expect.objectContaining({ status: 503 })]);
  });

  it('writes the access line as one text line with LOG_FORMAT=text', async () => {
    const { fastify, lines } = await served('text');
    await fastify.inject({ url: '/v1/sold/ETH', headers: { 'x-request-id': 'req-7' } });
    expect(lines.lines).toHaveLength(1);
    expect(lines.lines[0]).toMatch(
      /^\S+Z LOG {5}request completed requestId=req-7 method=GET route=\/v1\/sold\/:symbol status=200 durationMs=[\d.]+ client=127\.0\.0\.1 payer=0xabc amount=2000 network=eip155:84532$/,
    );
  });
});
