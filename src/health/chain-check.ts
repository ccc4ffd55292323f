import { Injectable } from '@nestjs/common';
import { ErrorCode } from '../common/api-error.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { NETWORK_PROBE_INTERVAL_MS, NetworkStates, type NetworkState } from '../payments/index.js';
import { READY, type CheckResult, type ReadinessCheck } from './readiness.js';

/**
 * The chains a paid request needs (each network's RPC: the embedded facilitator's chain, or the
 * receipt proofs in remote/CDP mode), as NetworkStates asks them: ready while at least one
 * network's chain answers (the 402 offers those); every network's state is in the metrics.
 */
@Injectable()
export class ChainCheck implements ReadinessCheck {
  readonly name = 'chain';

  constructor(
    private readonly networks: NetworkStates,
    metrics: MetricsService,
  ) {
    // a scrape asks too (sharing the states), so the gauges are current without a probe
    if (networks.checked) metrics.watchChains(() => this.networks.states());
  }

  /** Whether a chain is used at all; without one there is nothing to check. */
  get used(): boolean {
    return this.networks.checked;
  }

  async check(): Promise<CheckResult> {
    return readiness(await this.networks.states());
  }
}

/** Ready while one network's chain answers; else why each does not. */
export function readiness(states: readonly NetworkState[]): CheckResult {
  const down = states.filter((state) => state.state === 'down');
  if (down.length < states.length || down.length === 0) return READY;
  return {
    ok: false,
    code: ErrorCode.ChainUnavailable,
    reason: down.map((state) => `${state.network}: ${state.reason ?? 'down'}`).join('; '),
    retryAfterSeconds: Math.ceil(NETWORK_PROBE_INTERVAL_MS / 1000),
  };
}
