import { LogLines } from '../../test/support/log-lines.js';
import type { LogLevelName } from '../common/server.settings.js';
import { createLogs } from './log-output.js';
import type { LogFormat } from './logging.settings.js';

function logsTo(
  format: LogFormat,
  level: LogLevelName | 'silent',
): {
  lines: LogLines;
  logs: ReturnType<typeof createLogs>;
} {
  const lines = new LogLines();
  return { lines, logs: createLogs({ format, level, destination: lines }) };
}

describe('createLogs with LOG_FORMAT=json', () => {
  it('writes one JSON object per line: level (LOG_LEVEL names), ISO time, fields, message', () => {
    const { lines, logs } = logsTo('json', 'log');
    logs.events.log({ context: 'Main', port: 3000 }, 'Serving');
    expect(lines.records()).toEqual([
      {
        level: 'log',
        time: expect.any(String) as unknown,
        context: 'Main',
        port: 3000,
        message: 'Serving',
      },
    ]);
    const [record] = lines.records();
    expect(new Date(String(record!['time'])).toISOString()).toBe(record!['time']);
  });

  it.each<[LogLevelName, string[]]>([
    ['error', ['fatal', 'error']],
    ['warn', ['fatal', 'error', 'warn']],
    ['log', ['fatal', 'error', 'warn', 'log']],
    ['verbose', ['fatal', 'error', 'warn', 'log', 'debug', 'verbose']],
  ])('at LOG_LEVEL=%s writes %j', (level, written) => {
    const { lines, logs } = logsTo('json', level);
    for (const each of ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'] as const) {
      logs.events[each](each);
      logs.access[each](each);
    }
    expect(lines.records().map((record) => record['level'])).toEqual(
      written.flatMap((name) => [name, name]),
    );
  });

  it('writes nothing when silent', () => {
    const { lines, logs } = logsTo('json', 'silent');
    logs.events.fatal('x');
    logs.access.fatal('x');
    expect(lines.lines).toEqual([]);
  });

  it('never writes a signature, a key or a token that the code logs, up to four objects down', () => {
    const { lines, logs } = logsTo('json', 'log');
    logs.events.log(
      {
        signature: '0xdeadbeef',
        authorization: 'Bearer auth-1',
        payload: { signature: '0xdeadbeef', privateKey: '0x01' },
        a: { b: { c: { d: { token: 'tok-1', apiKeySecret: 'sec-1' } } } },
      },
      'oops',
    );
    const [line] = lines.lines;
    for (const secret of ['0xdeadbeef', '"0x01"', 'auth-1', 'tok-1', 'sec-1']) {
      expect(line).not.toContain(secret);
    }
    expect(lines.records()[0]).toMatchObject({
      signature: '[redacted]',
      payload: { signature: '[redacted]', privateKey: '[redacted]' },
    });
  });
});

describe('createLogs with LOG_FORMAT=text', () => {
  it('writes one readable line per record', () => {
    const { lines, logs } = logsTo('text', 'log');
    logs.events.log({ context: 'Main', port: 3000 }, 'Serving\nFORGED');
    expect(lines.lines).toHaveLength(1);
    expect(lines.lines[0]).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z LOG {5}\[Main\] Serving\\nFORGED port=3000$/,
    );
  });

  it('redacts as the JSON format does', () => {
    const { lines, logs } = logsTo('text', 'log');
    logs.events.warn({ payload: { privateKey: '0x01' } }, 'oops');
    expect(lines.lines[0]).toContain('payload={"privateKey":"[redacted]"}');
  });
});
