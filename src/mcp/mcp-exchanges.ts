import { Inject, Injectable, Optional } from '@nestjs/common';
import { ApiError, ErrorCode } from '../common/api-error.js';

/** How many `POST /mcp` exchanges may run at once, and for how long each. */
export interface McpExchangeLimits {
  readonly perClient: number;
  readonly total: number;
  readonly deadlineMs: number;
}

export const MCP_EXCHANGE_LIMITS = Symbol('McpExchangeLimits');

/**
 * A client runs a few exchanges at once (an agent's parallel calls), the service a bounded
 * number in all, well under HTTP_MAX_CONNECTIONS so that free routes and probes always find a
 * connection; each exchange ends by its deadline (a paid call's settlement included).
 */
export const DEFAULT_MCP_EXCHANGE_LIMITS: McpExchangeLimits = {
  perClient: 8,
  total: 256,
  deadlineMs: 30_000,
};

/** An exchange in progress: its deadline's signal, and its end. */
export interface McpExchange {
  readonly signal: AbortSignal;
  readonly leave: () => void;
}

/** The exchanges in progress, per client address and in all. */
@Injectable()
export class McpExchanges {
  private readonly byClient = new Map<string, number>();
  private running = 0;

  constructor(
    @Optional()
    @Inject(MCP_EXCHANGE_LIMITS)
    readonly limits: McpExchangeLimits = DEFAULT_MCP_EXCHANGE_LIMITS,
  ) {}

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
