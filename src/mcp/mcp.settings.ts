import { IsInt, Max, Min } from 'class-validator';
import type { SettingsSection } from '../config/settings.js';

/** How many `POST /mcp` exchanges may run at once, and for how long each. */
export interface McpExchangeLimits {
  /** Exchanges one client address may have in progress (MCP_MAX_EXCHANGES_PER_CLIENT). */
  readonly perClient: number;
  /** Exchanges this instance serves at once (MCP_MAX_EXCHANGES). */
  readonly total: number;
  /** When an exchange's unsold calls are cancelled (MCP_EXCHANGE_DEADLINE_MS). */
  readonly deadlineMs: number;
}

/**
 * A client runs a few exchanges at once (an agent's parallel calls), the service a bounded
 * number in all, well under HTTP_MAX_CONNECTIONS so that free routes and probes always find a
 * connection.
 */
class McpVariables {
  @IsInt()
  @Min(1)
  @Max(10_000)
  MCP_MAX_EXCHANGES_PER_CLIENT = 8;

  @IsInt()
  @Min(1)
  @Max(100_000)
  MCP_MAX_EXCHANGES = 256;

  @IsInt()
  @Min(1000)
  @Max(600_000)
  MCP_EXCHANGE_DEADLINE_MS = 30_000;
}

export const MCP_SETTINGS: SettingsSection<McpVariables, McpExchangeLimits> = {
  token: Symbol('McpSettings'),
  variables: McpVariables,
  build: (variables) => ({
    perClient: variables.MCP_MAX_EXCHANGES_PER_CLIENT,
    total: variables.MCP_MAX_EXCHANGES,
    deadlineMs: variables.MCP_EXCHANGE_DEADLINE_MS,
  }),
};
