import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { SNAPSHOT_STORE, type SnapshotStore } from '../aggregation/snapshot-store.js';
import { PriceRefreshService } from '../aggregation/price-refresh.service.js';
import type { VenueStatus } from '../aggregation/venue-poller.js';
import { HttpAnswers } from './http-answers.js';

const VENUE_STATES: readonly VenueStatus[] = ['waiting', 'ok', 'failing', 'rate_limited'];
/** Paid requests take a facilitator round trip and a block: buckets up to the settle deadline. */
const PAYMENT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 15, 30];
/** Longest refusal reason kept as a label: the leading machine token of a reason. */
const REASON_MAX = 64;

/**
 * The service's Prometheus metrics, in a registry of its own (one per app, so tests can run
 * several apps in one process). Payments and HTTP are counted as they happen through the small
 * named methods below; venue, price and chain health are read when scraped.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  /** `http_requests_total` and `http_request_duration_seconds` (see HttpAnswers). */
  readonly http = new HttpAnswers(this.registry);
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
  constructor(
    private readonly refresh: PriceRefreshService,
    @Inject(SNAPSHOT_STORE) private readonly store: SnapshotStore,
  ) {
    collectDefaultMetrics({ register: this.registry });
    this.venueGauges();
    this.priceAgeGauge();
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

  /**
   * Chain RPC gauges, present only where a chain is used; `probe` (the readiness check's, cached)
   * is asked at scrape time.
   */
  watchChain(probe: () => Promise<{ result: { ok: boolean }; seconds: number }>): void {
    new Gauge({
      name: 'x402_chain_rpc_up',
      help: 'Whether the chain RPC (X402_RPC_URL) answers eth_blockNumber (asked at most every 2 s).',
      registers: [this.registry],
      async collect() {
        this.set((await probe()).result.ok ? 1 : 0);
      },
    });
    new Gauge({
      name: 'x402_chain_rpc_latency_seconds',
      help: 'Time the last eth_blockNumber took (answered or failed).',
      registers: [this.registry],
      async collect() {
        this.set((await probe()).seconds);
      },
    });
  }

  /** The scrape: Prometheus text exposition format. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** Venue health read at scrape time from the pollers' own state: no call site in the price flow. */
  private venueGauges(): void {
    const refresh = this.refresh;
    new Gauge({
      name: 'price_venue_state',
      help: "Each venue's state: 1 for its current state (waiting, ok, failing, rate_limited), 0 for the others.",
      labelNames: ['venue', 'state'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const venue of refresh.venueStates()) {
          for (const state of VENUE_STATES) {
            this.set({ venue: venue.id, state }, venue.status === state ? 1 : 0);
          }
        }
      },
    });
    new Gauge({
      name: 'price_venue_stream_live',
      help: "Whether the venue's quotes arrive over its live ticker stream (1) or REST polling (0).",
      labelNames: ['venue'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const venue of refresh.venueStates())
          this.set({ venue: venue.id }, venue.transport === 'stream' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'price_venue_latency_seconds',
      help: "Duration of the venue's last REST poll.",
      labelNames: ['venue'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const venue of refresh.venueStates())
          if (venue.latencyMs !== undefined) this.set({ venue: venue.id }, venue.latencyMs / 1000);
      },
    });
    new Gauge({
      name: 'price_venue_consecutive_failures',
      help: 'Failed polls of the venue since its last success.',
      labelNames: ['venue'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const venue of refresh.venueStates())
          this.set({ venue: venue.id }, venue.consecutiveFailures);
      },
    });
    new Gauge({
      name: 'price_venue_last_success_age_seconds',
      help: 'Time since the venue last delivered quotes (poll or stream); absent before its first.',
      labelNames: ['venue'],
      registers: [this.registry],
      collect() {
        this.reset();
        const now = Date.now();
        for (const venue of refresh.venueStates())
          if (venue.lastSuccessAt !== undefined)
            this.set({ venue: venue.id }, (now - venue.lastSuccessAt) / 1000);
      },
    });
  }

  private priceAgeGauge(): void {
    const store = this.store;
    new Gauge({
      name: 'price_served_age_seconds',
      help: 'Age of the price each symbol would be served at now (newest agreeing quote); absent while it has none.',
      labelNames: ['symbol'],
      registers: [this.registry],
      async collect() {
        this.reset();
        const snapshot = await store.current();
        const now = Date.now();
        for (const [symbol, price] of snapshot?.prices ?? [])
          this.set({ symbol }, Math.max(0, now - price.observedAt) / 1000);
      },
    });
  }
}

/** A refusal reason as a bounded label: its leading machine token (`invalid_exact_evm_signature`). */
export function reasonLabel(reason: string): string {
  const token = /^[A-Za-z0-9_]+/.exec(reason.trim())?.[0];
  return token === undefined ? 'other' : token.slice(0, REASON_MAX);
}
