import { IsInt, IsOptional, Matches, Max, Min } from 'class-validator';
import { splitList, type SettingsSection } from '../config/settings.js';

/**
 * Per client address and window; 0 turns a limit off. A request with a payment counts only when
 * its payment is refused (or its client leaves before the answer), against `unpaid`.
 */
export interface RateLimitSettings {
  readonly windowMs: number;
  /** Requests to free routes. */
  readonly free: number;
  /** Requests to paid routes without a payment (the 402s). */
  readonly unpaid: number;
  /** Fastify's trustProxy: whose X-Forwarded-For names the client (TRUST_PROXY). */
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

  /** Whose X-Forwarded-For gives the client address: `true` (any), or proxy addresses/CIDRs. */
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
