/**
 * The service's log as an operator reads it, from the real app on a real port: one access line per
 * request in both formats (method, route pattern, status, duration, request id, client), the
 * request id on a line logged while serving it, secrets redacted, control characters escaped, and
 * the x402 SDK's own console warning (a facilitator that is down) as a line of the logger at
 * warn, gone at LOG_LEVEL=error.
 */
import { Controller, Get, Logger, Module } from '@nestjs/common';
import { FacilitatorServer } from './support/facilitator-server.js';
import { LogLines, type LogRecord } from './support/log-lines.js';
import { startApp, type RunningApp } from './support/test-app.js';

const SECRET = '0xdeadbeefsecret';
/** A line break, a forged line of the service's own shape and a terminal escape. */
const FORGED = 'probe\n[Nest] 4242  - LOG [SoldAnswers] payment settled FORGED\u001b[31m';

/** A route that logs while serving: secrets among its fields, a forged line in its message. */
@Controller('v1/log-probe')
class LogProbeController {
  private readonly logger = new Logger('LogProbe');

  @Get()
  probe(): { logged: boolean } {
    this.logger.warn(FORGED, { payload: { signature: SECRET }, authorization: `Bearer ${SECRET}` });
    return { logged: true };
  }
}

@Module({ controllers: [LogProbeController] })
class LogProbeModule {}

/** The remote facilitator the app is pointed at: down, so the SDK warns that it cannot list its kinds. */
async function downFacilitator(): Promise<FacilitatorServer> {
  const unreachable = (): Promise<never> => Promise.reject(new Error('down'));
  const server = await FacilitatorServer.start({
    getSupported: unreachable,
    verify: unreachable,
    settle: unreachable,
  });
  server.mode = 'refuse';
  return server;
}

/** The app, logging at `level` in `format` to `lines`, its facilitator down. */
async function loggingApp(
  format: 'json' | 'text',
  level: string,
  lines: LogLines,
  facilitator: FacilitatorServer,
): Promise<RunningApp> {
  return startApp(
    {
      LOG_FORMAT: format,
      LOG_LEVEL: level,
      X402_FACILITATOR: 'remote',
      X402_FACILITATOR_URL: facilitator.url,
      X402_FACILITATOR_TIMEOUT_MS: '500',
      X402_SCHEMES: 'exact',
    },
    [LogProbeModule],
    lines,
  );
}

const isAccessOf =
  (requestId: string | null) =>
  (record: LogRecord): boolean =>
    record['message'] === 'request completed' && record['requestId'] === requestId;

describe('logs with LOG_FORMAT=json', () => {
  const lines = new LogLines();
  let facilitator: FacilitatorServer;
  let service: RunningApp;

  beforeAll(async () => {
    facilitator = await downFacilitator();
    service = await loggingApp('json', 'log', lines, facilitator);
  });

  afterAll(async () => {
    await service.close();
    await facilitator.close();
  });

  it("writes the SDK's warning about a facilitator that is down as a line at warn, without its URL", async () => {
    const [warning] = await lines.awaitRecords((record) =>
      String(record['message']).startsWith('Failed to fetch supported kinds from facilitator'),
    );
    expect(warning).toMatchObject({ level: 'warn', context: 'x402' });
    expect(JSON.stringify(warning)).not.toContain(facilitator.url);
  });

  it('ends each request with one access line: method, route, status, duration, request id, client', async () => {
    const response = await service.get('/v1/assets', {
      headers: { 'x-request-id': 'logs-free-1' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('logs-free-1');
    expect(await lines.awaitRecords(isAccessOf('logs-free-1'))).toEqual([
      {
        level: 'log',
        time: expect.any(String) as unknown,
        requestId: 'logs-free-1',
        method: 'GET',
        route: '/v1/assets',
        status: 200,
        durationMs: expect.any(Number) as unknown,
        client: '127.0.0.1',
        message: 'request completed',
      },
    ]);
  });

  it('names a request without a plain X-Request-Id by the UUID it answers with, and a path no route has `unmatched`', async () => {
    const response = await service.get('/nowhere', { headers: { 'x-request-id': 'not plain' } });
    expect(response.status).toBe(404);
    const id = response.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await lines.awaitRecords(isAccessOf(id))).toEqual([
      expect.objectContaining({ route: 'unmatched', status: 404 }),
    ]);
  });

  it('names the request on a line logged while serving it, with secrets redacted and the message kept on its line', async () => {
    const response = await service.get('/v1/log-probe', { headers: { 'x-request-id': 'probe-1' } });
    expect(response.status).toBe(200);
    await lines.awaitRecords(isAccessOf('probe-1'));
    const logged = lines.records().filter((record) => record['context'] === 'LogProbe');
    expect(logged).toEqual([
      expect.objectContaining({
        level: 'warn',
        requestId: 'probe-1',
        message: FORGED,
        payload: { signature: '[redacted]' },
        authorization: '[redacted]',
      }),
    ]);
    expect(lines.lines.join('\n')).not.toContain(SECRET);
  });

  it('wrote every line as one JSON object with an ISO time, a level and a message', () => {
    expect(lines.lines.length).toBeGreaterThan(0);
    for (const record of lines.records()) {
      expect(typeof record['level']).toBe('string');
      expect(new Date(String(record['time'])).toISOString()).toBe(record['time']);
      expect(record['message']).toBeDefined();
    }
  });
});

describe('logs with LOG_FORMAT=text', () => {
  const lines = new LogLines();
  let facilitator: FacilitatorServer;
  let service: RunningApp;

  beforeAll(async () => {
    facilitator = await downFacilitator();
    service = await loggingApp('text', 'log', lines, facilitator);
  });

  afterAll(async () => {
    await service.close();
    await facilitator.close();
  });

  it("writes the SDK's warning as a text line at WARN under the context x402", async () => {
    const [warning] = await lines.awaitLines((line) =>
      line.includes('Failed to fetch supported kinds from facilitator'),
    );
    expect(warning).toMatch(
      /^\S+Z WARN {4}\[x402\] Failed to fetch supported kinds from facilitator/,
    );
    expect(warning).not.toContain(facilitator.url);
  });

  it('ends each request with one access line', async () => {
    await service.get('/v1/assets', { headers: { 'x-request-id': 'text-free-1' } });
    expect(await lines.awaitLines((line) => line.includes('requestId=text-free-1'))).toEqual([
      expect.stringMatching(
        /^\S+Z LOG {5}request completed requestId=text-free-1 method=GET route=\/v1\/assets status=200 durationMs=[\d.]+ client=127\.0\.0\.1$/,
      ),
    ]);
  });

  it('names the request on a line logged while serving it; control characters escaped, secrets redacted', async () => {
    await service.get('/v1/log-probe', { headers: { 'x-request-id': 'text-probe-1' } });
    const written = await lines.awaitLines((line) => line.includes('requestId=text-probe-1'));
    const probe = written.find((line) => line.includes('[LogProbe]'));
    expect(probe).toMatch(
      /^\S+Z WARN {4}\[LogProbe\] probe\\n\[Nest\] 4242 {2}- LOG \[SoldAnswers\] payment settled FORGED\\u001b\[31m requestId=text-probe-1 /,
    );
    expect(probe).toContain('payload={"signature":"[redacted]"} authorization=[redacted]');
    expect(written.filter((line) => line.includes('request completed'))).toHaveLength(1);
    for (const line of lines.lines) {
      expect(line).not.toMatch(/^\[Nest\]/);
      // eslint-disable-next-line no-control-regex
      expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    }
    expect(lines.lines.join('\n')).not.toContain(SECRET);
  });
});

describe('logs with LOG_LEVEL=error', () => {
  const lines = new LogLines();
  let facilitator: FacilitatorServer;
  let service: RunningApp;

  beforeAll(async () => {
    facilitator = await downFacilitator();
    service = await loggingApp('json', 'error', lines, facilitator);
  });

  afterAll(async () => {
    await service.close();
    await facilitator.close();
  });

  it("writes neither the SDK's warning nor the access line of an answered request", async () => {
    // the SDK warns as soon as its call to /supported fails
    for (const deadline = Date.now() + 5000; !facilitator.calls.includes('GET /supported');) {
      if (Date.now() > deadline) throw new Error('the SDK never asked the facilitator');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await service.get('/v1/assets')).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(lines.records().filter((record) => record['level'] !== 'error')).toEqual([]);
    expect(lines.records().filter((record) => record['context'] === 'x402')).toEqual([]);
  });
});
