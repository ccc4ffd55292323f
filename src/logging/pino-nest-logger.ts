/**
 * Nest's `LoggerService` on pino: every `new Logger(Context)` in the code base writes through it
 * unchanged. A line names the request being served (`requestId`), its context, and the plain
 * objects given with it as fields at the top level (`log('payment settled', { payer, … })`).
 */
import type { LoggerService } from '@nestjs/common';
import type { LogLevelName } from '../common/server.settings.js';
import type { AppPino } from './log-output.js';
import { currentRequestId } from './request-log.js';

/** What a Nest log call carries, sorted out of its arguments. */
export interface NestLogRecord {
  readonly message: string;
  readonly context: string | undefined;
  readonly stack: string | undefined;
  readonly fields: Readonly<Record<string, unknown>>;
}

/** Keys pino writes itself: a field of that name would repeat them. */
const OWN_KEYS = new Set(['level', 'time', 'message', 'requestId', 'context', 'stack']);

/** How a stack trace looks (Nest's own test): an `at file:line:column` line. */
const STACK = /\n[ \t]+at .+:\d+:\d+/;

export class PinoNestLogger implements LoggerService {
  constructor(private readonly pino: AppPino) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write('log', message, params, false);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params, false);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params, false);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('verbose', message, params, false);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params, true);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params, true);
  }

  private write(
    level: LogLevelName,
    message: unknown,
    params: readonly unknown[],
    withStack: boolean,
  ): void {
    if (!this.pino.isLevelEnabled(level)) return;
    const record = nestLogRecord(message, params, withStack);
    const requestId = currentRequestId();
    this.pino[level](
      {
        ...(requestId === undefined ? {} : { requestId }),
        ...(record.context === undefined ? {} : { context: record.context }),
        ...record.fields,
        ...(record.stack === undefined ? {} : { stack: record.stack }),
      },
      record.message,
    );
  }
}

/**
 * Nest's calling convention: the context last (a `Logger` with a context appends it), before it
 * the stack of an `error`/`fatal` (a string or undefined), plain objects are fields, anything else
 * joins the message.
 */
export function nestLogRecord(
  message: unknown,
  params: readonly unknown[],
  withStack: boolean,
): NestLogRecord {
  const rest = [...params];
  let context: string | undefined;
  let stack: string | undefined;
  const last = rest.at(-1);
  if (typeof last === 'string' && !(withStack && STACK.test(last))) {
    context = last;
    rest.pop();
  }
  if (withStack && rest.length > 0) {
    const candidate = rest.at(-1);
    if (candidate === undefined || typeof candidate === 'string') {
      stack = candidate;
      rest.pop();
    }
  }
  const texts: string[] = [];
  const fields: Record<string, unknown> = {};
  const take = (value: unknown): void => {
    if (value instanceof Error) {
      texts.push(value.message);
      stack ??= value.stack;
    } else if (isPlainObject(value)) {
      for (const [key, field] of Object.entries(value)) {
        if (!OWN_KEYS.has(key)) fields[key] = field;
      }
    } else if (value !== undefined) {
      texts.push(typeof value === 'string' ? value : stringOf(value));
    }
  };
  // an object given as the message is fields too, so that its secrets are redacted
  take(message);
  rest.forEach(take);
  return { message: texts.join(' '), context, stack, fields };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** A value that is not text, as text: JSON where it can be, else `String`. */
function stringOf(value: unknown): string {
  if (typeof value === 'bigint' || typeof value === 'symbol' || typeof value === 'function') {
    return String(value);
  }
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
