import { ApiError, ErrorCode } from '../common/api-error.js';
import { McpExchanges } from './mcp-exchanges.js';

function refusal(run: () => unknown): ApiError | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  return undefined;
}

describe('McpExchanges', () => {
  it('bounds the exchanges of one client, and frees a place when one ends', () => {
    const exchanges = new McpExchanges({ perClient: 2, total: 10, deadlineMs: 60_000 });
    const first = exchanges.enter('10.0.0.1');
    exchanges.enter('10.0.0.1');
    expect(refusal(() => exchanges.enter('10.0.0.1'))?.code).toBe(ErrorCode.RateLimited);
    expect(refusal(() => exchanges.enter('10.0.0.2'))).toBeUndefined();
    first.leave();
    first.leave();
    expect(exchanges.inProgress('10.0.0.1')).toBe(1);
    expect(refusal(() => exchanges.enter('10.0.0.1'))).toBeUndefined();
  });

  it('bounds the exchanges of all clients together', () => {
    const exchanges = new McpExchanges({ perClient: 5, total: 3, deadlineMs: 60_000 });
    for (const ip of ['a', 'b', 'c']) exchanges.enter(ip);
    const refused = refusal(() => exchanges.enter('d'));
    expect(refused?.headers['retry-after']).toBe('1');
    expect(exchanges.inProgress()).toBe(3);
  });

  it('aborts an exchange at its deadline, not one that ended before', async () => {
    const exchanges = new McpExchanges({ perClient: 5, total: 5, deadlineMs: 20 });
    const running = exchanges.enter('a');
    const ended = exchanges.enter('a');
    ended.leave();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(running.signal.aborted).toBe(true);
    expect(ended.signal.aborted).toBe(false);
    running.leave();
    expect(exchanges.inProgress('a')).toBe(0);
  });
});
