import Fastify, { type FastifyInstance } from 'fastify';
import { MemoryThrottlerStorage } from '../rate-limit/memory-throttler-storage.js';
import { RateLimiter } from '../rate-limit/rate-limit.guard.js';
import { CORS_HEADERS_WITHOUT_ORIGIN } from './cors.js';
import { installFastAnswers, type PreparedAnswer } from './fast-answers.js';

const NO_LIMITS = { windowMs: 60_000, free: 0, unpaid: 0, trustProxy: false };
const BODY = '{"count":1,"assets":[{"symbol":"BTC","quote":"USD"}]}';

/**
 * A Fastify server whose `/prepared` route has `answer` as its prepared answer and whose handler
 * (the whole way) answers 299 `whole way`; each answer's status is recorded by an onResponse hook.
 */
async function serverWith(
  answer: PreparedAnswer,
  requestId: () => string = () => 'req-1',
): Promise<{ server: FastifyInstance; url: string; finished: number[] }> {
  const server = Fastify({ genReqId: requestId });
  const finished: number[] = [];
  installFastAnswers(server, {
    limiter: new RateLimiter(new MemoryThrottlerStorage(), NO_LIMITS),
    routes: [{ url: '/prepared', paid: false, answer: () => answer }],
    logged: false,
  });
  server.get('/prepared', {
    onResponse: (_request, reply, done) => {
      finished.push(reply.statusCode);
      done();
    },
    handler: (_request, reply) => reply.code(299).send('whole way'),
  });
  const url = await server.listen({ port: 0, host: '127.0.0.1' });
  return { server, url: `${url}/prepared`, finished };
}

describe('prepared answers', () => {
  let server: FastifyInstance | undefined;

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** `answer` asked for once through a fresh server, with what its onResponse hook saw. */
  async function asked(
    answer: PreparedAnswer,
    requestId?: () => string,
  ): Promise<{ response: Response; finished: number[] }> {
    const started = await serverWith(answer, requestId);
    server = started.server;
    return { response: await fetch(started.url), finished: started.finished };
  }

  it('sends the answer with the CORS headers, the request id and its length, past the handler', async () => {
    const { response, finished } = await asked({
      status: 200,
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
      body: BODY,
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(BODY);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(BODY)));
    expect(response.headers.get('x-request-id')).toBe('req-1');
    for (const [name, value] of Object.entries(CORS_HEADERS_WITHOUT_ORIGIN)) {
      expect(response.headers.get(name)).toBe(value);
    }
    expect(finished).toEqual([200]);
  });

  it("keeps an answer's own request id, as Fastify's reply would", async () => {
    const { response } = await asked({
      status: 200,
      headers: { 'X-Request-Id': 'its-own' },
      body: BODY,
    });
    expect(response.headers.get('x-request-id')).toBe('its-own');
  });

  it.each([
    ['a header value Node refuses', { status: 200, headers: { 'x-note': 'a\nb' }, body: BODY }],
    ['a header name Node refuses', { status: 200, headers: { 'bad name': 'x' }, body: BODY }],
    ['a status Fastify refuses', { status: 700, headers: {}, body: BODY }],
  ])('leaves an answer with %s to the whole way', async (_case, answer) => {
    const { response, finished } = await asked(answer);
    expect(response.status).toBe(299);
    expect(await response.text()).toBe('whole way');
    expect(finished).toEqual([299]);
  });

  it('leaves a request whose id cannot be a header value to the whole way', async () => {
    const { response, finished } = await asked(
      { status: 200, headers: {}, body: BODY },
      () => 'bad\rid',
    );
    expect(response.status).toBe(299);
    expect(finished).toEqual([299]);
  });
});
