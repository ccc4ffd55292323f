import type { PriceRefreshService } from '../aggregation/price-refresh.service.js';
import { InMemorySnapshotStore } from '../aggregation/snapshot-store.js';
import type { VenueState } from '../aggregation/venue-poller.js';
import { MetricsService, reasonLabel } from './metrics.service.js';

const ROUTE = '/v1/ticker/:symbol';
const REQUIREMENT = {
  scheme: 'exact',
  network: 'eip155:84532',
  asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  amount: '2000',
};

function venue(overrides: Partial<VenueState>): VenueState {
  return {
    id: 'kraken',
    status: 'ok',
    lastAttemptAt: undefined,
    lastSuccessAt: undefined,
    lastError: undefined,
    latencyMs: undefined,
    consecutiveFailures: 0,
    nextPollAt: 0,
    instruments: 0,
    transport: 'rest',
    stream: undefined,
    ...overrides,
  };
}

function metricsWith(venues: VenueState[] = []): MetricsService {
  const refresh = { venueStates: () => venues } as unknown as PriceRefreshService;
  return new MetricsService(refresh, new InMemorySnapshotStore());
}

async function value(metrics: MetricsService, name: string, labels: object): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const sample = (metric?.values ?? []).find((v) =>
    Object.entries(labels).every(([key, wanted]) => v.labels[key] === wanted),
  );
  return sample?.value ?? 0;
}

describe('MetricsService', () => {
  it('counts revenue only for a proven settlement, in atomic units', async () => {
    const metrics = metricsWith();
    metrics.paymentVerified(ROUTE, 0.01);
    metrics.settlementNotProven(ROUTE, 'unknown', 'settlement_deadline: not confirmed', 15);
    metrics.settlementNotProven(ROUTE, 'refused', 'invalid_exact_evm_nonce_already_used', 0.1);
    expect(await value(metrics, 'x402_revenue_atomic_total', { route: ROUTE })).toBe(0);
    metrics.paymentSettled(ROUTE, REQUIREMENT, 0.5);
    metrics.paymentSettled(ROUTE, REQUIREMENT, 0.5);
    expect(
      await value(metrics, 'x402_revenue_atomic_total', { route: ROUTE, scheme: 'exact' }),
    ).toBe(4000);
    expect(
      await value(metrics, 'x402_payments_total', {
        outcome: 'unknown',
        reason: 'settlement_deadline',
      }),
    ).toBe(1);
    expect(
      await value(metrics, 'x402_payments_total', {
        outcome: 'refused',
        reason: 'invalid_exact_evm_nonce_already_used',
      }),
    ).toBe(1);
  });

  it('reads venue health when scraped', async () => {
    const now = Date.now();
    const metrics = metricsWith([
      venue({ id: 'kraken', status: 'ok', latencyMs: 120, lastSuccessAt: now - 3000 }),
      venue({ id: 'okx', status: 'failing', consecutiveFailures: 3 }),
    ]);
    expect(await value(metrics, 'price_venue_state', { venue: 'kraken', state: 'ok' })).toBe(1);
    expect(await value(metrics, 'price_venue_state', { venue: 'okx', state: 'ok' })).toBe(0);
    expect(await value(metrics, 'price_venue_state', { venue: 'okx', state: 'failing' })).toBe(1);
    expect(await value(metrics, 'price_venue_consecutive_failures', { venue: 'okx' })).toBe(3);
    expect(await value(metrics, 'price_venue_latency_seconds', { venue: 'kraken' })).toBe(0.12);
    expect(
      await value(metrics, 'price_venue_last_success_age_seconds', { venue: 'kraken' }),
    ).toBeGreaterThanOrEqual(3);
  });
});

describe('reasonLabel', () => {
  it.each([
    ['payment_already_used: this payment has already been settled', 'payment_already_used'],
    ['invalid_exact_evm_signature', 'invalid_exact_evm_signature'],
    ['  ', 'other'],
    ['Über alles', 'other'],
    ['a'.repeat(100), 'a'.repeat(64)],
  ])('%j → %j', (reason, label) => {
    expect(reasonLabel(reason)).toBe(label);
  });
});
