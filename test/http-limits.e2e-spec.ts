import { requirementFor, startPaidApp, type PaidApp } from './support/paid-app.js';
import { bodyOf, openSocket, rawRequest, statusOf, trickle } from './support/raw-http.js';
import { startApp, type RunningApp } from './support/test-app.js';
import { signedPayment, v2Header } from './support/x402-payloads.js';

const PRICE = 2000n;

function headerLines(headers: Record<string, string>): string {
  return Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
}

describe('request targets and bodies on the paid path', () => {
  let stack: PaidApp;
  let host: string;

  beforeAll(async () => {
    stack = await startPaidApp();
    host = new URL(stack.service.url).host;
  });
  afterAll(() => stack.close());

  it('an absolute-form target is the same route: 402 naming the path, then paid 200', async () => {
    const challenge = await rawRequest(
      stack.service.url,
      `GET http://${host}/v1/ticker/BTC HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
    );
    expect(statusOf(challenge)).toBe(402);
    const v1Body = bodyOf(challenge) as { accepts: { resource: string }[] };
    expect(new URL(v1Body.accepts[0]?.resource ?? '').pathname).toBe('/v1/ticker/BTC');
    const required = /^payment-required: (.+)$/im.exec(challenge)?.[1]?.trim() ?? '';
    const decoded = JSON.parse(Buffer.from(required, 'base64').toString()) as {
      resource: { url: string };
    };
    expect(new URL(decoded.resource.url).pathname).toBe('/v1/ticker/BTC');

    const before = await stack.balances();
    const payment = await signedPayment(
      stack.buyer.account,
      await requirementFor(stack, '/v1/ticker/BTC'),
    );
    const paid = await rawRequest(
      stack.service.url,
      `GET http://${host}/v1/ticker/BTC?x=1 HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n` +
        `${headerLines(v2Header(payment))}\r\n`,
    );
    expect(statusOf(paid)).toBe(200);
    expect(bodyOf(paid)).toMatchObject({
      currency: 'USD',
      price: { BTC: expect.any(Number) as number },
    });
    expect(await stack.balances()).toEqual({
      buyer: before.buyer - PRICE,
      payTo: before.payTo + PRICE,
    });
  });

  it('a GET carrying a body is refused with 400 before anything is verified or charged', async () => {
    const before = await stack.balances();
    const payment = await signedPayment(
      stack.buyer.account,
      await requirementFor(stack, '/v1/ticker/ETH'),
    );
    const answer = await rawRequest(
      stack.service.url,
      `GET /v1/ticker/ETH HTTP/1.1\r\nHost: ${host}\r\n${headerLines(v2Header(payment))}` +
        `Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
    );
    expect(statusOf(answer)).toBe(400);
    expect(answer).toMatch(/^connection: close$/im);
    expect(bodyOf(answer)).toMatchObject({
      code: 'bad_request',
      detail: 'A GET request carries no body.',
    });
    const chunked = await rawRequest(
      stack.service.url,
      `GET /v1/assets HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    );
    expect(statusOf(chunked)).toBe(400);
    expect(await stack.balances()).toEqual(before);
    // The same payment, sent properly, is still good: nothing was used up.
    const served = await stack.service.get('/v1/ticker/ETH', { headers: v2Header(payment) });
    expect(served.status).toBe(200);
  });
});

describe('slow and idle clients', () => {
  const TIMEOUT_MS = 1500;
  let service: RunningApp;

  beforeAll(async () => {
    service = await startApp({
      HTTP_REQUEST_TIMEOUT_MS: String(TIMEOUT_MS),
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000',
      HTTP_MAX_CONNECTIONS: '400',
    });
  });
  afterAll(() => service.close());

  it('closes trickling headers, trickling bodies and silent sockets near the request time-out while serving others', async () => {
    const host = new URL(service.url).host;
    const slowHeaders = Array.from({ length: 100 }, () =>
      trickle(
        service.url,
        `GET /v1/assets HTTP/1.1\r\nHost: ${host}\r\nX-Slow: ${'a'.repeat(500)}`,
        50,
      ),
    );
    const slowBodies = Array.from({ length: 100 }, () =>
      trickle(
        service.url,
        `OPTIONS /v1/assets HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 1000\r\n\r\n${'b'.repeat(1000)}`,
        5,
      ),
    );
    const silent = Array.from({ length: 100 }, () => trickle(service.url, '', 1000));
    const everyone = [...slowHeaders, ...slowBodies, ...silent];
    try {
      // While they hold their sockets, ordinary requests are answered promptly.
      for (let i = 0; i < 10; i++) {
        const started = Date.now();
        const response = await service.get('/v1/assets');
        expect(response.status).toBe(200);
        expect(Date.now() - started).toBeLessThan(1000);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const closed = await Promise.all(everyone.map((client) => client.closedAfter));
      // Closed after the time-out, and not long after it (Node checks every TIMEOUT_MS / 10).
      expect(Math.min(...closed)).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
      expect(Math.max(...closed)).toBeLessThan(TIMEOUT_MS + 2000);
      expect(statusOf(slowHeaders[0]?.answer() ?? '')).toBe(408);
    } finally {
      everyone.forEach((client) => {
        client.stop();
      });
    }
  }, 20_000);

  it('closes idle keep-alive connections after HTTP_KEEP_ALIVE_TIMEOUT_MS', async () => {
    const host = new URL(service.url).host;
    const socket = openSocket(service.url);
    const closed = new Promise<number>((resolve) => {
      const opened = Date.now();
      socket.on('close', () => {
        resolve(Date.now() - opened);
      });
    });
    socket.on('data', () => undefined);
    socket.write(`GET /v1/assets HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    const idleFor = await closed;
    expect(idleFor).toBeGreaterThanOrEqual(900);
    expect(idleFor).toBeLessThan(TIMEOUT_MS + 2000);
  });
});

describe('connection cap', () => {
  it('connections beyond HTTP_MAX_CONNECTIONS are closed on arrival; capacity returns when they go', async () => {
    const service = await startApp({ HTTP_MAX_CONNECTIONS: '5' });
    const held = Array.from({ length: 5 }, () => openSocket(service.url));
    try {
      await Promise.all(
        held.map((socket) => new Promise((resolve) => socket.once('connect', resolve))),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      await expect(service.get('/v1/assets')).rejects.toThrow();
      held.forEach((socket) => socket.destroy());
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await service.get('/v1/assets')).status).toBe(200);
    } finally {
      held.forEach((socket) => socket.destroy());
      await service.close();
    }
  });
});
