import { ConsoleLogger, type LogLevel } from '@nestjs/common';
import type { LogFormat } from './logging.settings.js';
import { currentRequestId } from './request-context.js';

type JsonLogOptions = Parameters<ConsoleLogger['getJsonLogObject']>[1];

/** Keys never written to a log, whatever object is logged: signed payloads, keys, tokens. */
const REDACTED_KEYS = ['signature', 'privateKey', 'authorization', 'apiKeySecret', 'token'];

/**
 * Nest's console logger. `text` (default): human-readable lines for a terminal. `json`: one JSON
 * object per line with `time`, `level`, `context`, `message`, structured fields at the top level
 * and `requestId` on every line written while serving a request.
 */
export class AppLogger extends ConsoleLogger {
  constructor(format: LogFormat, logLevels: LogLevel[]) {
    super({
      logLevels,
      json: format === 'json',
      flattenParams: true,
      redact: REDACTED_KEYS,
    });
  }

  protected override getJsonLogObject(
    message: unknown,
    options: JsonLogOptions,
  ): ReturnType<ConsoleLogger['getJsonLogObject']> {
    const { timestamp, level, ...rest } = super.getJsonLogObject(message, options);
    const requestId = currentRequestId();
    return {
      time: new Date(timestamp).toISOString(),
      level,
      timestamp,
      ...(requestId === undefined ? {} : { requestId }),
      ...rest,
    };
  }
}
