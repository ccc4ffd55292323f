/**
 * The service's log as a collector reads it (LOG_FORMAT=json): one access line per request with
 * its method, route, status, duration, request id and client; a sale's payer and amount on the
 * paying request's access line; and the x402 SDK's own warnings (a facilitator that is down) as
 * JSON lines at warn, not console text.
 */
import type { DestinationStream } from 'pino';
import { EmbeddedFacilitatorClient } from '../src/payments/facilitator-client.js';
import { FacilitatorServer } from './support/facilitator-server.js';
import { requirementFor, startPaidApp, type PaidApp } from './support/paid-app.js';

/** Every line the app logged, parsed: each must be one JSON object. */
class LogRecords implements DestinationStream {
  readonly records: Record<string, unknown>[] = [];

  write(chunk: string): void {
    for (const line of chunk.split('\n').filter((text) => text !== '')) {
      this.records.push(JSON.parse(line) as Record<string, unknown>);
    }
  }

  /** The records matching `match`, once at least one was written (lines follow the answer). */
  async awaitMatching(
    match: (record: Record<string, unknown>) => boolean,
    ms = 5000,
  ): Promise<Record<string, unknown>[]> {
    for (const deadline = Date.now() + ms; ;) {
      const found = this.records.filter(match);
      if (found.length > 0 || Date.now() > deadline) return found;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

const accessLineOf =
  (requestId: string | null) =>
  (record: Record<string, unknown>): boolean =>
    record['message'] === 'request completed' && record['requestId'] === requestId;

describe('logs with LOG_FORMAT=json', () => {
  const logs = new LogRecords();
  let stack: PaidApp;
  let facilitator: FacilitatorServer;

  beforeAll(async () => {
    stack = await startPaidApp({
      env: {
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'log',
        X402_FACILITATOR: 'remote',
        X402_FACILITATOR_TIMEOUT_MS: '500',
      },
      logDestination: logs,
      beforeApp: async (chain) => {
        facilitator = await FacilitatorServer.start(
          new EmbeddedFacilitatorClient(chain.accounts[0]!, chain.rpcUrl, 'eip155:84532', {
            receiptMaxWaitMs: 20,
          }),
        );
        // down when the service starts: the SDK warns that it cannot list its kinds
        facilitator.mode = 'refuse';
        return { X402_FACILITATOR_URL: facilitator.url };
      },
    });
  });

  afterAll(async () => {
    await stack.close();
    await facilitator.close();
  });

  it("writes the SDK's warning about a facilitator that is down as a JSON line at warn", async () => {
    const [warning] = await logs.awaitMatching((record) =>
      String(record['message']).startsWith('Failed to fetch supported kinds from facilitator'),
    );
    expect(warning).toMatchObject({ level: 'warn', context: 'x402' });
    expect(JSON.stringify(warning)).not.toContain(facilitator.url);
  });

  it('ends each request with one access line: method, route, status, duration, request id, client', async () => {
    const response = await stack.service.get('/v1/assets', {
      headers: { 'x-request-id': 'logs-free-1' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('logs-free-1');
    const lines = await logs.awaitMatching(accessLineOf('logs-free-1'));
    expect(lines).toEqual([
      {
        level: 'info',
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

  it('names a request without a plain X-Request-Id by the UUID it answers with', async () => {
    const response = await stack.service.get('/health/live', {
      headers: { 'x-request-id': 'not plain' },
    });
    const id = response.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await logs.awaitMatching(accessLineOf(id))).toEqual([
      expect.objectContaining({ route: '/health/live', status: 200 }),
    ]);
  });

  it("puts a sale's payer and amount on its access line, and its request id on the sale's line", async () => {
    facilitator.mode = 'up';
    for (const deadline = Date.now() + 20_000; ;) {
      if ((await stack.service.get('/health/ready')).status === 200) break;
      if (Date.now() > deadline) throw new Error('the service never became ready');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const requirement = await requirementFor(stack, '/v1/ticker/BTC');
    const paid = await stack.buyer.fetchV2(`${stack.service.url}/v1/ticker/BTC`);
    expect(paid.status).toBe(200);
    const id = paid.headers.get('x-request-id');
    const payer = stack.buyer.account.address;
    expect(await logs.awaitMatching(accessLineOf(id))).toEqual([
      expect.objectContaining({
        route: '/v1/ticker/:symbol',
        status: 200,
        payer,
        amount: requirement.amount,
      }),
    ]);
    const sales = logs.records.filter((record) => record['message'] === 'payment settled');
    expect(sales).toEqual([
      expect.objectContaining({
        requestId: id,
        context: 'SoldAnswers',
        payer,
        route: '/v1/ticker/:symbol',
        amount: requirement.amount,
        transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) as unknown,
      }),
    ]);
    // the 402 that asked for the payment is no sale
    const challenges = logs.records.filter(
      (record) =>
        record['message'] === 'request completed' &&
        record['status'] === 402 &&
        record['route'] === '/v1/ticker/:symbol',
    );
    expect(challenges.length).toBeGreaterThan(0);
    for (const challenge of challenges) expect(challenge['payer']).toBeUndefined();
  }, 40_000);

  it('wrote every line as JSON with an ISO time, a level and a message', () => {
    expect(logs.records.length).toBeGreaterThan(0);
    for (const record of logs.records) {
      expect(typeof record['level']).toBe('string');
      expect(new Date(String(record['time'])).toISOString()).toBe(record['time']);
      expect(record['message']).toBeDefined();
    }
  });
});
