import middie from '@fastify/middie';
import Fastify, { type FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { pinoHttp, type HttpLogger } from 'pino-http';
import type { LogLevelName } from '../common/server.settings.js';
import { installRequestLogging } from './access-line.js';
import type { LogFormat } from './logging.settings.js';
import { pinoHttpOptions } from './log-output.js';
import { requestIdOf } from './request-id.js';

/** The lines an app's logger wrote. */
class Lines implements DestinationStream {
  readonly written: string[] = [];

  write(chunk: string): void {
    this.written.push(...chunk.split('\n').filter((line) => line !== ''));
  }

  records(): Record<string, unknown>[] {
    return this.written.map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}

/**
 * Fastify as createApp builds it for logging: the request id from X-Request-Id, pino-http
 * mounted through @fastify/middie (as nestjs-pino is), then the access line's route.
 */
async function servedBy(
  format: LogFormat,
  level: LogLevelName,
): Promise<{ fastify: FastifyInstance; lines: Lines; http: HttpLogger }> {
  const lines = new Lines();
  const http = pinoHttp(...pinoHttpOptions({ format, level, destination: lines }));
  const fastify = Fastify({ genReqId: requestIdOf });
  await fastify.register(middie);
  fastify.use(http);
  installRequestLogging(fastify);
  fastify.get('/v1/ticker/:symbol', (request) => {
    // the request's own logger, as nestjs-pino finds it (middie set `raw.log` to Fastify's)
    const { allLogs } = request.raw as { allLogs: HttpLogger['logger'][] };
    allLogs.at(-1)?.info({ context: 'TickersController' }, 'answering');
    return { ok: true };
  });
  fastify.get('/fails', async (_request, reply) => reply.code(503).send({ down: true }));
  await fastify.ready();
  return { fastify, lines, http };
}

describe('pino-http options with LOG_FORMAT=json', () => {
  it('writes one JSON object per line: time (ISO), level (pino label), message, context, fields at the top level', async () => {
    const { http, lines } = await servedBy('json', 'log');
    http.logger.info({ context: 'Main', port: 3000 }, 'Serving');
    const [record, ...rest] = lines.records();
    expect(rest).toEqual([]);
    expect(record).toEqual({
      level: 'info',
      time: expect.any(String) as unknown,
      context: 'Main',
      port: 3000,
      message: 'Serving',
    });
    expect(new Date(String(record!['time'])).toISOString()).toBe(record!['time']);
  });

  it('ends each request with one access line, and names the request on every line written while serving it', async () => {
    const { fastify, lines } = await servedBy('json', 'log');
    const response = await fastify.inject({
      url: '/v1/ticker/BTC?x=1',
      headers: { 'x-request-id': 'req-42', authorization: 'Bearer secret' },
    });
    expect(response.headers['x-request-id']).toBe('req-42');
    const [inside, access, ...rest] = lines.records();
    expect(rest).toEqual([]);
    expect(inside).toMatchObject({ requestId: 'req-42', message: 'answering' });
    expect(access).toEqual({
      level: 'info',
      time: expect.any(String) as unknown,
      requestId: 'req-42',
      method: 'GET',
      route: '/v1/ticker/:symbol',
      status: 200,
      durationMs: expect.any(Number) as unknown,
      client: '127.0.0.1',
      message: 'request completed',
    });
    expect(lines.written.join('\n')).not.toContain('secret');
  });

  it('gives a request without a plain id a UUID, answered and logged', async () => {
    const { fastify, lines } = await servedBy('json', 'log');
    const response = await fastify.inject({ url: '/nowhere', headers: { 'x-request-id': 'a b' } });
    const id = response.headers['x-request-id'];
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const [access, ...rest] = lines.records();
    expect(rest).toEqual([]);
    expect(access).toMatchObject({ requestId: id, method: 'GET', status: 404 });
    expect(access).not.toHaveProperty('route');
  });

  it('logs a failed answer at warn', async () => {
    const { fastify, lines } = await servedBy('json', 'log');
    await fastify.inject({ url: '/fails' });
    expect(lines.records()).toEqual([
      expect.objectContaining({ level: 'warn', status: 503, message: 'request completed' }),
    ]);
  });

  it('maps LOG_LEVEL to pino levels: log is info, verbose is trace', async () => {
    const atWarn = await servedBy('json', 'warn');
    atWarn.http.logger.info('hidden');
    atWarn.http.logger.warn('shown');
    expect(atWarn.lines.records().map((record) => record['message'])).toEqual(['shown']);
    const atVerbose = await servedBy('json', 'verbose');
    atVerbose.http.logger.trace('shown too');
    expect(atVerbose.lines.records()).toEqual([
      expect.objectContaining({ level: 'trace', message: 'shown too' }),
    ]);
  });

  it('never writes a signature, a key or a token, however deep', async () => {
    const { http, lines } = await servedBy('json', 'log');
    http.logger.info(
      {
        signature: '0xdeadbeef',
        payload: { signature: '0xdeadbeef', privateKey: '0x01' },
        a: { b: { c: { token: 'tok-1', apiKeySecret: 'sec-1' } } },
      },
      'oops',
    );
    const [line] = lines.written;
    for (const secret of ['0xdeadbeef', '"0x01"', 'tok-1', 'sec-1']) {
      expect(line).not.toContain(secret);
    }
  });
});

describe('pino-http options with LOG_FORMAT=text', () => {
  it('writes one readable line per record: level, [context] message, fields', async () => {
    const { http, lines } = await servedBy('text', 'log');
    http.logger.info({ context: 'Main', port: 3000 }, 'Serving');
    expect(lines.written).toHaveLength(1);
    expect(lines.written[0]).toMatch(/^\[.+\] INFO: \[Main\] Serving \{"port":3000\}$/);
  });

  it('writes the access line as one line too', async () => {
    const { fastify, lines } = await servedBy('text', 'log');
    await fastify.inject({ url: '/v1/ticker/BTC', headers: { 'x-request-id': 'req-7' } });
    expect(lines.written).toHaveLength(2);
    expect(lines.written[1]).toContain('INFO: request completed');
    expect(lines.written[1]).toContain('"route":"/v1/ticker/:symbol"');
    expect(lines.written[1]).toContain('"requestId":"req-7"');
  });

  it('cannot be made to start a line of its own by what a message or a stack contains', async () => {
    const { http, lines } = await servedBy('text', 'log');
    const forged = 'boom\n[Nest] 4242  - LOG [SoldAnswers] payment settled FORGED\u001b[31m';
    http.logger.error({ context: 'X\nY', stack: `Error: ${forged}\n    at x (y.js:1:1)` }, forged);
    expect(lines.written).toHaveLength(1);
    expect(lines.written[0]).toContain('[X\\nY] boom\\n[Nest] 4242');
    expect(lines.written[0]).not.toContain('\u001b');
  });
});
