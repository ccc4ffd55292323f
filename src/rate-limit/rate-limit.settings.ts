import { IsInt, IsOptional, Matches, Max, Min } from 'class-validator';
import { splitList, type SettingsSection } from '../config/settings.js';

/**
 * Per client address and window; 0 turns a limit off. A request to a paid route counts against
 * `unpaid` unless it is a sale, which gives back one of the window's 402s instead.
 */
export interface RateLimitSettings {
  readonly windowMs: number;
  /** Requests to free routes. */
  readonly free: number;
  /** Requests to paid routes that bought nothing: 402s not paid for, refused payments, errors. */
  readonly unpaid: number;
  /** Fastify's trustProxy: whose X-Forwarded-For/-Host/-Proto describe the client (TRUST_PROXY). */
  readonly trustProxy: boolean | string[];
}

class RateLimitVariables {
  @IsInt()
  @Min(1000)
  @Max(3_600_000)
  RATE_LIMIT_WINDOW_MS = 60_000;

  @IsInt()
  @Min(0)
  @Max(1_000_000)
  RATE_LIMIT_FREE = 600;

  @IsInt()
  @Min(0)
  @Max(1_000_000)
  RATE_LIMIT_UNPAID = 120;

  /** Whose X-Forwarded-* headers are believed: `true` (any), or proxy addresses/CIDRs. */
  @IsOptional()
  @Matches(/^(true|false|[0-9a-fA-F.:/]+(\s*,\s*[0-9a-fA-F.:/]+)*)$/, {
    message: 'TRUST_PROXY must be true, false, or a comma list of proxy addresses or CIDRs',
  })
  TRUST_PROXY?: string;
}

export const RATE_LIMIT_SETTINGS: SettingsSection<RateLimitVariables, RateLimitSettings> = {
  token: Symbol('RateLimitSettings'),
  variables: RateLimitVariables,
  build: (variables) => ({
    windowMs: variables.RATE_LIMIT_WINDOW_MS,
    free: variables.RATE_LIMIT_FREE,
    unpaid: variables.RATE_LIMIT_UNPAID,
    trustProxy: parseTrustProxy(variables.TRUST_PROXY),
  }),
};

function parseTrustProxy(value: string | undefined): boolean | string[] {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  return splitList(value);
}
