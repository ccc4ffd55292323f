import { IsIn, IsInt, IsNumber, IsOptional, IsString, Matches, Max, Min } from 'class-validator';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

const COMMA_LIST = /^\s*[^,\s]+(\s*,\s*[^,\s]+)*\s*$/;

/**
 * The process environment as the operator writes it. Every property is one variable; its
 * decorators are the validation rules and its initialiser the default.
 */
export class EnvironmentVariables {
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  @IsString()
  HOST = '0.0.0.0';

  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevelName = 'log';

  @IsOptional()
  @IsString()
  MARKETS?: string;

  @IsInt()
  @Min(100)
  @Max(60_000)
  MARKET_TIMEOUT_MS = 4000;

  @IsOptional()
  @Matches(COMMA_LIST, { message: 'ASSETS must be a comma-separated list of symbols' })
  ASSETS?: string;

  @IsInt()
  @Min(250)
  @Max(3_600_000)
  PRICE_REFRESH_MS = 5000;

  @IsInt()
  @Min(1000)
  @Max(86_400_000)
  PRICE_STALE_MS = 60_000;

  @IsInt()
  @Min(1)
  @Max(100)
  PRICE_MIN_SOURCES = 2;

  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0.0001)
  @Max(0.5)
  PRICE_MAX_DEVIATION = 0.02;
}
