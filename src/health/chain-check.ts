import { Inject, Injectable } from '@nestjs/common';
import { createPublicClient, http, type PublicClient } from 'viem';
import { ErrorCode } from '../common/api-error.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { READY, type CheckResult, type ReadinessCheck } from './readiness.js';

/** A readiness probe must answer fast: the RPC gets this long for one eth_blockNumber. */
export const CHAIN_CHECK_TIMEOUT_MS = 1000;
/** Probes more often than this share one answer, so probing never loads the RPC. */
export const CHAIN_CHECK_CACHE_MS = 2000;

/**
 * The chain RPC a paid request needs (X402_RPC_URL: the embedded facilitator's chain, or the
 * receipt proofs in remote/CDP mode): one cheap `eth_blockNumber`, short time-out, short cache.
 */
@Injectable()
export class ChainCheck implements ReadinessCheck {
  readonly name = 'chain';
  private readonly client: PublicClient | undefined;
  private last: { readonly at: number; readonly result: Promise<CheckResult> } | undefined;

  constructor(
    @Inject(APP_CONFIG) { payments }: AppConfig,
    private readonly metrics: MetricsService,
  ) {
    this.client =
      payments.rpcUrl === undefined
        ? undefined
        : createPublicClient({
            transport: http(payments.rpcUrl, { timeout: CHAIN_CHECK_TIMEOUT_MS, retryCount: 0 }),
          });
  }

  /** Whether a chain is used at all; without one there is nothing to check. */
  get used(): boolean {
    return this.client !== undefined;
  }

  check(): Promise<CheckResult> {
    const now = Date.now();
    if (this.last === undefined || now - this.last.at >= CHAIN_CHECK_CACHE_MS) {
      this.last = { at: now, result: this.ask() };
    }
    return this.last.result;
  }

  private async ask(): Promise<CheckResult> {
    if (this.client === undefined) return READY;
    const started = performance.now();
    try {
      await this.client.getBlockNumber({ cacheTime: 0 });
      this.metrics.chainChecked(true, (performance.now() - started) / 1000);
      return READY;
    } catch (error) {
      this.metrics.chainChecked(false, (performance.now() - started) / 1000);
      return {
        ok: false,
        code: ErrorCode.ChainUnavailable,
        // viem's short message: the long one names the RPC URL, which can carry a key
        reason: `eth_blockNumber to the chain RPC failed within ${CHAIN_CHECK_TIMEOUT_MS} ms: ${shortMessage(error)}`,
        retryAfterSeconds: Math.ceil(CHAIN_CHECK_CACHE_MS / 1000),
      };
    }
  }
}

function shortMessage(error: unknown): string {
  if (error !== null && typeof error === 'object' && 'shortMessage' in error)
    return String(error.shortMessage);
  return error instanceof Error ? error.name : 'error';
}
