import { MetricsService } from '../metrics/metrics.service.js';
import { PriceMetrics } from './price-metrics.js';
import type { PriceRefreshService } from './price-refresh.service.js';
import { InMemorySnapshotStore } from './snapshot-store.js';
import { waitingState, type VenueState } from './venue-poller.js';

function venue(overrides: Partial<VenueState>): VenueState {
  return { ...waitingState('kraken'), status: 'ok', ...overrides };
}

function registeredWith(venues: VenueState[]): MetricsService {
  const metrics = new MetricsService();
  const refresh = { venueStates: () => venues } as unknown as PriceRefreshService;
  new PriceMetrics(metrics, refresh, new InMemorySnapshotStore()).onModuleInit();
  return metrics;
}

async function value(metrics: MetricsService, name: string, labels: object): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const sample = (metric?.values ?? []).find((v) =>
    Object.entries(labels).every(([key, wanted]) => v.labels[key] === wanted),
  );
  return sample?.value ?? 0;
}

describe('PriceMetrics', () => {
  it('reads venue health when scraped', async () => {
    const now = Date.now();
    const metrics = registeredWith([
      venue({ id: 'kraken', status: 'ok', latencyMs: 120, lastSuccessAt: now - 3000 }),
      venue({ id: 'okx', status: 'failing', consecutiveFailures: 3, transport: 'stream' }),
    ]);
    expect(await value(metrics, 'price_venue_state', { venue: 'kraken', state: 'ok' })).toBe(1);
    expect(await value(metrics, 'price_venue_state', { venue: 'okx', state: 'ok' })).toBe(0);
    expect(await value(metrics, 'price_venue_state', { venue: 'okx', state: 'failing' })).toBe(1);
    expect(await value(metrics, 'price_venue_stream_live', { venue: 'okx' })).toBe(1);
    expect(await value(metrics, 'price_venue_consecutive_failures', { venue: 'okx' })).toBe(3);
    expect(await value(metrics, 'price_venue_latency_seconds', { venue: 'kraken' })).toBe(0.12);
    expect(
      await value(metrics, 'price_venue_last_success_age_seconds', { venue: 'kraken' }),
    ).toBeGreaterThanOrEqual(3);
  });

  it('leaves the served-price age out while there is no snapshot', async () => {
    const metrics = registeredWith([]);
    const json = await metrics.registry.getMetricsAsJSON();
    expect(json.find((m) => m.name === 'price_served_age_seconds')?.values).toEqual([]);
  });
});
