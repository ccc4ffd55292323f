import { Inject, Injectable } from '@nestjs/common';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { MCP_SETTINGS, type McpExchangeLimits } from './mcp.settings.js';

/** An exchange in progress: its deadline's signal, and its end. */
export interface McpExchange {
  readonly signal: AbortSignal;
  readonly leave: () => void;
}

/**
 * The exchanges in progress, per client address and in all (MCP_MAX_EXCHANGES_PER_CLIENT,
 * MCP_MAX_EXCHANGES), each with its deadline (MCP_EXCHANGE_DEADLINE_MS).
 */
@Injectable()
export class McpExchanges {
  private readonly byClient = new Map<string, number>();
  private running = 0;

  constructor(@Inject(MCP_SETTINGS.token) readonly limits: McpExchangeLimits) {}

  /** Starts an exchange for `ip`, or throws the 429 that refuses it (nothing was run). */
  enter(ip: string): McpExchange {
    const mine = this.byClient.get(ip) ?? 0;
    if (mine >= this.limits.perClient) {
      throw busy(`${ip} has ${String(mine)} MCP exchanges in progress, the most one client may.`);
    }
    if (this.running >= this.limits.total) {
      throw busy(
        `${String(this.running)} MCP exchanges are in progress, the most this instance serves.`,
      );
    }
    this.byClient.set(ip, mine + 1);
    this.running += 1;
    const deadline = new AbortController();
    const timer = setTimeout(() => {
      deadline.abort();
    }, this.limits.deadlineMs);
    // the exchange's own request keeps the process alive; its deadline need not
    timer.unref();
    let left = false;
    return {
      signal: deadline.signal,
      leave: () => {
        if (left) return;
        left = true;
        clearTimeout(timer);
        this.running -= 1;
        const count = (this.byClient.get(ip) ?? 1) - 1;
        if (count === 0) this.byClient.delete(ip);
        else this.byClient.set(ip, count);
      },
    };
  }

  /** Exchanges in progress for `ip` (0 once all ended). */
  inProgress(ip?: string): number {
    return ip === undefined ? this.running : (this.byClient.get(ip) ?? 0);
  }
}

function busy(detail: string): ApiError {
  return new ApiError(ErrorCode.RateLimited, `${detail} Retry when one has ended.`, {
    'retry-after': '1',
  });
}
