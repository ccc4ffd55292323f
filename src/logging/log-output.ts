import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino, type DestinationStream, type Level, type LevelWithSilent } from 'pino';
import type { Options } from 'pino-http';
import type { LogLevelName } from '../common/server.settings.js';
import { accessFields } from './access-line.js';
import type { LogFormat } from './logging.settings.js';
import { MESSAGE_KEY, textDestination } from './text-destination.js';

/** Where and how an app's log lines are written. */
export interface LogOutput {
  readonly format: LogFormat;
  /** LOG_LEVEL; `silent` for an app built without a logger (tests). */
  readonly level: LogLevelName | 'silent';
  /** Standard output unless given (a test reads the lines here). */
  readonly destination?: DestinationStream;
}

/** LOG_LEVEL keeps Nest's names; pino calls `log` `info` and `verbose` `trace`. */
export const PINO_LEVELS: Readonly<Record<LogLevelName, Level>> = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

/** Keys never written to a log, whatever object is logged: signed payloads, keys, tokens. */
export const REDACTED_KEYS = ['signature', 'privateKey', 'authorization', 'apiKeySecret', 'token'];

/** pino redacts by path: each key at the top and up to this many objects down. */
const REDACTED_DEPTH = 4;

export const REDACTED_PATHS = REDACTED_KEYS.flatMap((key) =>
  Array.from({ length: REDACTED_DEPTH + 1 }, (_, depth) =>
    [...Array<string>(depth).fill('*'), key].join('.'),
  ),
);

const ACCESS_MESSAGE = 'request completed';

/**
 * pino-http's options, with the stream it writes to. JSON: one object per line with `time` (ISO),
 * `level` (pino's label), `message`, `context` and the structured fields at the top level; text:
 * the same records as pino-pretty lines. Every line written while serving a request carries its
 * `requestId`; each request ends with one access line (`request completed`).
 */
export function pinoHttpOptions(output: LogOutput): [Options, DestinationStream] {
  const options: Options = {
    level: output.level === 'silent' ? 'silent' : PINO_LEVELS[output.level],
    messageKey: MESSAGE_KEY,
    base: null,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    customAttributeKeys: { reqId: 'requestId', responseTime: 'durationMs' },
    // lines written while serving a request carry its id alone; the access line adds its fields
    quietReqLogger: true,
    quietResLogger: true,
    customLogLevel: accessLevel,
    customSuccessMessage: () => ACCESS_MESSAGE,
    customErrorMessage: () => ACCESS_MESSAGE,
    customSuccessObject: (request: IncomingMessage, response: ServerResponse, value: Timed) =>
      accessFields(request, response, value.durationMs),
    customErrorObject: (
      request: IncomingMessage,
      response: ServerResponse,
      _error: Error,
      value: Timed,
    ) => accessFields(request, response, value.durationMs),
  };
  if (output.format === 'text') return [options, textDestination(output.destination)];
  return [
    {
      ...options,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    output.destination ?? pino.destination({ dest: 1, sync: true }),
  ];
}

/** What pino-http hands the access line's object builders: the duration under our key. */
interface Timed {
  readonly durationMs: number;
}

/** A failed answer (5xx, or a response that errored) is a warning; the rest are information. */
function accessLevel(
  _request: IncomingMessage,
  response: ServerResponse,
  error?: Error,
): LevelWithSilent {
  return error !== undefined || response.statusCode >= 500 ? 'warn' : 'info';
}
