/**
 * The app's pino loggers, as LOG_LEVEL and LOG_FORMAT configure them: Nest's level names, an ISO
 * `time`, `message`, JSON lines or one text line per record, written to standard output through
 * sonic-boom (pino's asynchronous destination: batched, flushed when the process exits). What the
 * code logs has secrets' keys redacted; access lines, whose fields the app builds, skip that cost.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevelName } from '../common/server.settings.js';
import type { LogFormat } from './logging.settings.js';
import { textDestination } from './text-lines.js';

/** LOG_LEVEL's names are pino's levels here, so a JSON line says `log` as Nest's did. */
export const PINO_LEVELS: Readonly<Record<LogLevelName, number>> = {
  fatal: 60,
  error: 50,
  warn: 40,
  log: 30,
  debug: 20,
  verbose: 10,
};

export type AppPino = Logger<LogLevelName>;

/** Where and how an app logs. */
export interface LogOutput {
  readonly format: LogFormat;
  /** LOG_LEVEL; `silent` for an app built without a logger. */
  readonly level: LogLevelName | 'silent';
  /** Standard output unless given (a test reads the lines here). */
  readonly destination?: DestinationStream;
}

/** The two loggers of an app, on one pino root and one destination. */
export interface AppLogs {
  /** One line per request: fields the app builds, nothing to redact. */
  readonly access: AppPino;
  /** What the code logs (Nest's `Logger`, the SDK's console lines): secrets' keys redacted. */
  readonly events: AppPino;
}

/** Keys never written to a log, whatever object is logged: signed payloads, keys, tokens. */
export const REDACTED_KEYS = ['signature', 'privateKey', 'authorization', 'apiKeySecret', 'token'];

/** pino redacts by path: each key at the top of a record and up to this many objects down. */
const REDACTED_DEPTH = 4;

const REDACTED_PATHS = REDACTED_KEYS.flatMap((key) =>
  Array.from({ length: REDACTED_DEPTH + 1 }, (_, depth) =>
    [...Array<string>(depth).fill('*'), key].join('.'),
  ),
);

/**
 * Standard output takes lines in writes of at least this many bytes, and whatever is waiting at
 * least this often: a write per line would cost every request a system call and a thread hop.
 */
const STDOUT_BATCH_BYTES = 4096;
const STDOUT_FLUSH_MS = 100;

/** Where the lines go when no destination is given, and nowhere for a silent app. */
function destinationOf(output: LogOutput): DestinationStream {
  if (output.level === 'silent') return { write: () => undefined };
  const out =
    output.destination ??
    pino.destination({
      dest: 1,
      sync: false,
      minLength: STDOUT_BATCH_BYTES,
      periodicFlush: STDOUT_FLUSH_MS,
    });
  return output.format === 'text' ? textDestination(out) : out;
}

export function createLogs(output: LogOutput): AppLogs {
  const access = pino(
    {
      level: output.level,
      customLevels: PINO_LEVELS,
      useOnlyCustomLevels: true,
      base: null,
      messageKey: 'message',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destinationOf(output),
  );
  const events = access.child({}, { redact: { paths: REDACTED_PATHS, censor: '[redacted]' } });
  return { access, events };
}
