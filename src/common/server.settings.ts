import { IsIn, IsInt, IsString, Max, Min } from 'class-validator';
import type { SettingsSection } from '../config/settings.js';

/** The listening socket and the limits that keep slow or idle clients from holding it. */
export interface HttpSettings {
  readonly port: number;
  readonly host: string;
  /** Time to receive a whole request, headers and body. */
  readonly requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  readonly keepAliveTimeoutMs: number;
  /** Connections beyond this many are closed on arrival. */
  readonly maxConnections: number;
}

class HttpVariables {
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  @IsString()
  HOST = '0.0.0.0';

  @IsInt()
  @Min(1000)
  @Max(300_000)
  HTTP_REQUEST_TIMEOUT_MS = 15_000;

  @IsInt()
  @Min(1000)
  @Max(600_000)
  HTTP_KEEP_ALIVE_TIMEOUT_MS = 5000;

  @IsInt()
  @Min(1)
  @Max(1_000_000)
  HTTP_MAX_CONNECTIONS = 1024;
}

export const HTTP_SETTINGS: SettingsSection<HttpVariables, HttpSettings> = {
  token: Symbol('HttpSettings'),
  variables: HttpVariables,
  build: (variables) => ({
    port: variables.PORT,
    host: variables.HOST,
    requestTimeoutMs: variables.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: variables.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: variables.HTTP_MAX_CONNECTIONS,
  }),
};

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

class LogLevelVariables {
  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevelName = 'log';
}

/** The most verbose level logged; everything above it is too. */
export const LOG_LEVEL_SETTINGS: SettingsSection<LogLevelVariables, LogLevelName> = {
  token: Symbol('LogLevel'),
  variables: LogLevelVariables,
  build: (variables) => variables.LOG_LEVEL,
};
