import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** HTTP answers take from under a millisecond (cached) to seconds (a paid call's settlement). */
const HTTP_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Paid requests take a facilitator round trip and a block: buckets up to the settle deadline. */
const PAYMENT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 15, 30];
/** Longest refusal reason kept as a label: the leading machine token of a reason. */
const REASON_MAX = 64;

/**
 * The service's Prometheus registry (one per app, so tests can run several apps in one process)
 * and the HTTP and payment metrics, counted as they happen through the small named methods
 * below. Feature modules register gauges of their own on `registry`, read when scraped.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  private readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
  });
  private readonly httpDurations = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from request to response sent, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'],
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });
  private readonly payments = new Counter({
    name: 'x402_payments_total',
    help: 'Payments by route and outcome (challenged, verified, settled, refused, unknown, reconciled: unknown, then shown settled on chain); refusals and unknowns name their reason.',
    labelNames: ['route', 'outcome', 'reason'],
    registers: [this.registry],
  });
  private readonly revenue = new Counter({
    name: 'x402_revenue_atomic_total',
    help: 'Revenue proven settled (exact: on chain, at once or by reconciliation; batch-settlement: owed by a recorded voucher, claimed on chain by the next claim round), in atomic units of the asset (USDC: 1e-6 USD), by route and scheme.',
    labelNames: ['route', 'scheme', 'network', 'asset'],
    registers: [this.registry],
  });
  private readonly verification = new Histogram({
    name: 'x402_verification_duration_seconds',
    help: 'Facilitator verification time, by outcome (verified, refused, error).',
    labelNames: ['outcome'],
    buckets: PAYMENT_BUCKETS,
    registers: [this.registry],
  });
  private readonly settlement = new Histogram({
    name: 'x402_settlement_duration_seconds',
    help: 'Settlement time, broadcast and receipt proof, by outcome (settled, refused, unavailable, unknown).',
    labelNames: ['outcome'],
    buckets: PAYMENT_BUCKETS,
    registers: [this.registry],
  });
  private readonly facilitatorErrors = new Counter({
    name: 'x402_facilitator_errors_total',
    help: 'Calls to the facilitator that got no usable answer, by operation (verify, settle, supported).',
    labelNames: ['operation'],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** An HTTP answer sent: `route` is the matched pattern (`/v1/ticker/:symbol`). */
  httpAnswered(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.httpRequests.inc(labels);
    this.httpDurations.observe(labels, seconds);
  }

  /** A paid route answered 402 to a request that carried no payment. */
  paymentChallenged(route: string): void {
    this.payments.inc({ route, outcome: 'challenged', reason: '' });
  }

  /** A payment refused (402) before or at settlement; nothing moved. */
  paymentRefused(route: string, reason: string): void {
    this.payments.inc({ route, outcome: 'refused', reason: reasonLabel(reason) });
  }

  paymentVerified(route: string, seconds: number): void {
    this.payments.inc({ route, outcome: 'verified', reason: '' });
    this.verification.observe({ outcome: 'verified' }, seconds);
  }

  /** Verification ended without a verified payment: refused by the facilitator, or no answer. */
  verificationFailed(outcome: 'refused' | 'error', seconds: number): void {
    this.verification.observe({ outcome }, seconds);
  }

  /** The settlement of `amount` (atomic units) is proven: the only place revenue is counted. */
  paymentSettled(
    route: string,
    requirement: { scheme: string; network: string; asset: string; amount: string },
    seconds: number,
  ): void {
    const { scheme, network, asset, amount } = requirement;
    this.payments.inc({ route, outcome: 'settled', reason: '' });
    this.revenue.inc({ route, scheme, network, asset }, Number(amount));
    this.settlement.observe({ outcome: 'settled' }, seconds);
  }

  /** An unknown settlement the chain later showed settled (the reconciler): revenue after all. */
  paymentReconciled(
    route: string,
    requirement: { scheme: string; network: string; asset: string; amount: string },
  ): void {
    const { scheme, network, asset, amount } = requirement;
    this.payments.inc({ route, outcome: 'reconciled', reason: '' });
    this.revenue.inc({ route, scheme, network, asset }, Number(amount));
  }

  /** A settlement that did not end proven: refused (402), unavailable (503) or unknown (502). */
  settlementNotProven(
    route: string,
    outcome: 'refused' | 'unavailable' | 'unknown',
    reason: string,
    seconds: number,
  ): void {
    if (outcome === 'unknown') this.payments.inc({ route, outcome, reason: reasonLabel(reason) });
    else if (outcome === 'refused') this.paymentRefused(route, reason);
    this.settlement.observe({ outcome }, seconds);
  }

  facilitatorError(operation: string): void {
    this.facilitatorErrors.inc({ operation });
  }

  /** Each network's chain RPC, as the gauges show it (a probe shared with readiness). */
  watchChains(
    states: () => Promise<readonly { network: string; state: string; seconds: number }[]>,
  ): void {
    new Gauge({
      name: 'x402_chain_rpc_up',
      help: "Whether each network's chain RPC answers eth_blockNumber (asked at most every 2 s).",
      labelNames: ['network'],
      registers: [this.registry],
      async collect() {
        for (const state of await states()) {
          if (state.state !== 'unchecked')
            this.set({ network: state.network }, state.state === 'up' ? 1 : 0);
        }
      },
    });
    new Gauge({
      name: 'x402_chain_rpc_latency_seconds',
      help: "Time each network's last eth_blockNumber took (answered or failed).",
      labelNames: ['network'],
      registers: [this.registry],
      async collect() {
        for (const state of await states()) {
          if (state.state !== 'unchecked') this.set({ network: state.network }, state.seconds);
        }
      },
    });
  }

  /** The scrape: Prometheus text exposition format. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** A refusal reason as a bounded label: its leading machine token (`invalid_exact_evm_signature`). */
export function reasonLabel(reason: string): string {
  const token = /^[A-Za-z0-9_]+/.exec(reason.trim())?.[0];
  return token === undefined ? 'other' : token.slice(0, REASON_MAX);
}
