import { Inject, Injectable } from '@nestjs/common';
import { createPublicClient, type PublicClient } from 'viem';
import { ErrorCode } from '../common/api-error.js';
import { jsonRpcTransport } from '../chain/json-rpc-transport.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../payments/payments.settings.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { READY, type CheckResult, type ReadinessCheck } from './readiness.js';
import { RecentAnswer } from './recent-answer.js';

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
  private readonly recent = new RecentAnswer(CHAIN_CHECK_CACHE_MS, () => this.ask());

  constructor(@Inject(PAYMENT_SETTINGS.token) payments: PaymentConfig, metrics: MetricsService) {
    this.client =
      payments.rpcUrl === undefined
        ? undefined
        : createPublicClient({
            transport: jsonRpcTransport(payments.rpcUrl, { timeoutMs: CHAIN_CHECK_TIMEOUT_MS }),
          });
    // a scrape asks too (sharing the cache), so the gauges are current without a readiness probe
    if (this.client !== undefined) metrics.watchChain(() => this.probe());
  }

  /** Whether a chain is used at all; without one there is nothing to check. */
  get used(): boolean {
    return this.client !== undefined;
  }

  async check(): Promise<CheckResult> {
    return (await this.probe()).result;
  }

  /** The last answer if younger than the cache time, else a new ask. */
  probe(): Promise<ChainProbe> {
    return this.recent.get();
  }

  private async ask(): Promise<ChainProbe> {
    if (this.client === undefined) return { result: READY, seconds: 0 };
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    try {
      await this.client.getBlockNumber({ cacheTime: 0 });
      return { result: READY, seconds: seconds() };
    } catch (error) {
      return { result: chainUnavailable(error), seconds: seconds() };
    }
  }
}

/** One look at the chain: the readiness verdict and how long the RPC took. */
export interface ChainProbe {
  readonly result: CheckResult;
  readonly seconds: number;
}

function chainUnavailable(error: unknown): CheckResult {
  return {
    ok: false,
    code: ErrorCode.ChainUnavailable,
    // viem's short message: the long one names the RPC URL, which can carry a key
    reason: `eth_blockNumber to the chain RPC failed within ${CHAIN_CHECK_TIMEOUT_MS} ms: ${shortMessage(error)}`,
    retryAfterSeconds: Math.ceil(CHAIN_CHECK_CACHE_MS / 1000),
  };
}

function shortMessage(error: unknown): string {
  if (error !== null && typeof error === 'object' && 'shortMessage' in error)
    return String(error.shortMessage);
  return error instanceof Error ? error.name : 'error';
}
