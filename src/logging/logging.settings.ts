import { IsIn } from 'class-validator';
import type { SettingsSection } from '../config/settings.js';

export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

class LogFormatVariables {
  /** `json`: one JSON object per line, for log collectors; `text` for a terminal. */
  @IsIn(LOG_FORMATS)
  LOG_FORMAT: LogFormat = 'text';
}

/** How log lines are written (the level is LOG_LEVEL, beside the server's settings). */
export const LOG_FORMAT_SETTINGS: SettingsSection<LogFormatVariables, LogFormat> = {
  token: Symbol('LogFormat'),
  variables: LogFormatVariables,
  build: (variables) => variables.LOG_FORMAT,
};
