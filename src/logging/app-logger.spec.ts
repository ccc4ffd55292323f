import type { IncomingMessage } from 'node:http';
import { AppLogger } from './app-logger.js';
import { requestContext, requestIdOf } from './request-context.js';

function captureStdout(write: () => void): string[] {
  const chunks: string[] = [];
  const original = process.stdout.write.bind(process.stdout);
  process.stdout.write = (chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  };
  try {
    write();
  } finally {
    process.stdout.write = original;
  }
  return chunks.join('').split('\n').filter(Boolean);
}

describe('AppLogger with LOG_FORMAT=json', () => {
  const logger = new AppLogger('json', ['log', 'warn', 'error']);

  it('writes one JSON object per line with time, level, context and message', () => {
    const [line, ...rest] = captureStdout(() => {
      logger.log('Serving', 'Main');
    });
    expect(rest).toEqual([]);
    const record = JSON.parse(line!) as Record<string, unknown>;
    expect(record).toMatchObject({ level: 'log', context: 'Main', message: 'Serving' });
    expect(new Date(String(record['time'])).toISOString()).toBe(record['time']);
    expect(record['requestId']).toBeUndefined();
  });

  it('names the request a line was written for, with structured fields at the top level', () => {
    const [line] = captureStdout(() => {
      requestContext.run({ requestId: 'req-42' }, () => {
        logger.log('payment settled', { payer: '0xabc', amount: '2000' }, 'SettlementInterceptor');
      });
    });
    expect(JSON.parse(line!)).toMatchObject({
      requestId: 'req-42',
      message: 'payment settled',
      payer: '0xabc',
      amount: '2000',
      context: 'SettlementInterceptor',
    });
  });

  it('never writes a signature or a key, whatever object is logged', () => {
    const [line] = captureStdout(() => {
      logger.log('oops', { payload: { signature: '0xdeadbeef', privateKey: '0x01' } }, 'X');
    });
    expect(line).not.toContain('0xdeadbeef');
    expect(line).not.toContain('"0x01"');
  });

  it('honours LOG_LEVEL', () => {
    expect(
      captureStdout(() => {
        logger.debug('noise', 'X');
      }),
    ).toEqual([]);
  });
});

describe('requestIdOf', () => {
  const withHeader = (value: string | undefined): IncomingMessage =>
    ({ headers: value === undefined ? {} : { 'x-request-id': value } }) as IncomingMessage;

  it("keeps the caller's plain X-Request-Id", () => {
    expect(requestIdOf(withHeader('3f2b-Trace.1:a_b'))).toBe('3f2b-Trace.1:a_b');
  });

  it.each([undefined, '', 'has space', 'new\nline', 'x'.repeat(129)])(
    'replaces %j with a new UUID',
    (value) => {
      expect(requestIdOf(withHeader(value))).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      );
    },
  );
});
