import { Logger } from '@nestjs/common';
import { LogLines } from '../../test/support/log-lines.js';
import { createLogs } from './log-output.js';
import { nestLogRecord, PinoNestLogger } from './pino-nest-logger.js';
import { runWithRequestLog } from './request-log.js';

const STACK = 'Error: boom\n    at handler (/app/dist/x.js:1:2)';

describe('nestLogRecord', () => {
  it.each<[string, unknown, unknown[], boolean, ReturnType<typeof nestLogRecord>]>([
    [
      'a Logger with a context',
      'Serving',
      ['Main'],
      false,
      { message: 'Serving', context: 'Main', stack: undefined, fields: {} },
    ],
    [
      'fields given with the message',
      'payment settled',
      [{ payer: '0xabc', amount: '2000' }, 'SoldAnswers'],
      false,
      {
        message: 'payment settled',
        context: 'SoldAnswers',
        stack: undefined,
        fields: { payer: '0xabc', amount: '2000' },
      },
    ],
    [
      'an error of a Logger with a context and no stack (Nest passes undefined)',
      'failed',
      [undefined, 'Filter'],
      true,
      { message: 'failed', context: 'Filter', stack: undefined, fields: {} },
    ],
    [
      'an error with its stack and context',
      'Unhandled error',
      [STACK, 'ProblemDetailsFilter'],
      true,
      { message: 'Unhandled error', context: 'ProblemDetailsFilter', stack: STACK, fields: {} },
    ],
    [
      'an error with a stack and no context',
      'Unhandled error',
      [STACK],
      true,
      { message: 'Unhandled error', context: undefined, stack: STACK, fields: {} },
    ],
    [
      'values that are neither text nor plain objects, joined to the message',
      'counts',
      [3, [1, 2], 'C'],
      false,
      { message: 'counts 3 [1,2]', context: 'C', stack: undefined, fields: {} },
    ],
    [
      "fields that would repeat the line's own keys",
      'x',
      [{ level: 'fake', message: 'fake', kept: 1 }, 'C'],
      false,
      { message: 'x', context: 'C', stack: undefined, fields: { kept: 1 } },
    ],
  ])('reads %s', (_, message, params, withStack, expected) => {
    expect(nestLogRecord(message, params, withStack)).toEqual(expected);
  });

  it('reads an Error given as the message by its message, with its stack', () => {
    const error = new Error('no key');
    expect(nestLogRecord(error, ['X'], true)).toEqual({
      message: 'no key',
      context: 'X',
      stack: error.stack,
      fields: {},
    });
  });
});

describe('PinoNestLogger', () => {
  const lines = new LogLines();
  const logger = new PinoNestLogger(
    createLogs({ format: 'json', level: 'log', destination: lines }).events,
  );

  beforeAll(() => {
    Logger.overrideLogger(logger);
  });

  afterAll(() => {
    Logger.overrideLogger(true);
  });

  beforeEach(() => {
    lines.clear();
  });

  it("writes Nest's Logger calls as records: context, fields at the top level, message", () => {
    new Logger('SoldAnswers').log('payment settled', { payer: '0xabc', amount: '2000' });
    expect(lines.records()).toEqual([
      {
        level: 'log',
        time: expect.any(String) as unknown,
        context: 'SoldAnswers',
        payer: '0xabc',
        amount: '2000',
        message: 'payment settled',
      },
    ]);
  });

  it('names the request being served on every line, however asynchronous', async () => {
    const served = new Promise<void>((resolve) => {
      runWithRequestLog({ requestId: 'req-42', sale: undefined }, () => {
        void (async () => {
          await new Promise((later) => setTimeout(later, 5));
          new Logger('Guard').warn('slow');
          resolve();
        })();
      });
    });
    new Logger('Main').log('outside');
    await served;
    expect(lines.records()).toEqual([
      expect.not.objectContaining({ requestId: expect.anything() as unknown }),
      expect.objectContaining({
        level: 'warn',
        requestId: 'req-42',
        context: 'Guard',
        message: 'slow',
      }),
    ]);
  });

  it("keeps an error's stack, and redacts secrets given as fields or as the message object", () => {
    new Logger('Filter').error('Unhandled error', STACK);
    new Logger('X').log({ signature: '0xdeadbeef' });
    const [error, secret] = lines.records();
    expect(error).toMatchObject({ level: 'error', context: 'Filter', stack: STACK });
    expect(lines.lines[1]).not.toContain('0xdeadbeef');
    expect(secret).toMatchObject({ signature: '[redacted]', context: 'X' });
  });

  it('honours LOG_LEVEL', () => {
    new Logger('X').debug('noise');
    new Logger('X').verbose('noise');
    expect(lines.lines).toEqual([]);
  });
});
