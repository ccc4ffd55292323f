import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { Gauge, type Registry } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service.js';
import { PriceRefreshService } from './price-refresh.service.js';
import { SNAPSHOT_STORE, type SnapshotStore } from './snapshot-store.js';
import { VENUE_STATUSES, type VenueState } from './venue-poller.js';

/**
 * Venue health and served-price age on the app's metrics registry, read when scraped from the
 * pollers' own state and the current snapshot: no call site in the price flow.
 */
@Injectable()
export class PriceMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: MetricsService,
    private readonly refresh: PriceRefreshService,
    @Inject(SNAPSHOT_STORE) private readonly store: SnapshotStore,
  ) {}

  onModuleInit(): void {
    registerVenueGauges(this.metrics.registry, () => this.refresh.venueStates());
    registerServedAgeGauge(this.metrics.registry, this.store);
  }
}

function registerVenueGauges(registry: Registry, venues: () => VenueState[]): void {
  new Gauge({
    name: 'price_venue_state',
    help: "Each venue's state: 1 for its current state (waiting, ok, failing, rate_limited), 0 for the others.",
    labelNames: ['venue', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      for (const venue of venues()) {
        for (const state of VENUE_STATUSES) {
          this.set({ venue: venue.id, state }, venue.status === state ? 1 : 0);
        }
      }
    },
  });
  new Gauge({
    name: 'price_venue_stream_live',
    help: "Whether the venue's quotes arrive over its live ticker stream (1) or REST polling (0).",
    labelNames: ['venue'],
    registers: [registry],
    collect() {
      this.reset();
      for (const venue of venues())
        this.set({ venue: venue.id }, venue.transport === 'stream' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'price_venue_latency_seconds',
    help: "Duration of the venue's last REST poll.",
    labelNames: ['venue'],
    registers: [registry],
    collect() {
      this.reset();
      for (const venue of venues())
        if (venue.latencyMs !== undefined) this.set({ venue: venue.id }, venue.latencyMs / 1000);
    },
  });
  new Gauge({
    name: 'price_venue_consecutive_failures',
    help: 'Failed polls of the venue since its last success.',
    labelNames: ['venue'],
    registers: [registry],
    collect() {
      this.reset();
      for (const venue of venues()) this.set({ venue: venue.id }, venue.consecutiveFailures);
    },
  });
  new Gauge({
    name: 'price_venue_last_success_age_seconds',
    help: 'Time since the venue last delivered quotes (poll or stream); absent before its first.',
    labelNames: ['venue'],
    registers: [registry],
    collect() {
      this.reset();
      const now = Date.now();
      for (const venue of venues())
        if (venue.lastSuccessAt !== undefined)
          this.set({ venue: venue.id }, (now - venue.lastSuccessAt) / 1000);
    },
  });
}

function registerServedAgeGauge(registry: Registry, store: SnapshotStore): void {
  new Gauge({
    name: 'price_served_age_seconds',
    help: 'Age of the price each symbol would be served at now (newest agreeing quote); absent while it has none.',
    labelNames: ['symbol'],
    registers: [registry],
    async collect() {
      this.reset();
      const snapshot = await store.current();
      const now = Date.now();
      for (const [symbol, price] of snapshot?.prices ?? [])
        this.set({ symbol }, Math.max(0, now - price.observedAt) / 1000);
    },
  });
}
