import { MetricsService, reasonLabel } from './metrics.service.js';

const ROUTE = '/v1/ticker/:symbol';
const REQUIREMENT = {
  scheme: 'exact',
  network: 'eip155:84532',
  asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  amount: '2000',
};

async function value(metrics: MetricsService, name: string, labels: object): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const sample = (metric?.values ?? []).find((v) =>
    Object.entries(labels).every(([key, wanted]) => v.labels[key] === wanted),
  );
  return sample?.value ?? 0;
}

describe('MetricsService', () => {
  it('counts revenue only for a proven settlement, in atomic units', async () => {
    const metrics = new MetricsService();
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

  it('counts HTTP answers by method, route pattern and status, with their durations', async () => {
    const metrics = new MetricsService();
    metrics.httpAnswered('GET', ROUTE, 402, 0.003);
    metrics.httpAnswered('GET', ROUTE, 402, 0.02);
    metrics.httpAnswered('GET', 'unmatched', 404, 12);
    const labels = { method: 'GET', route: ROUTE, status: '402' };
    expect(await value(metrics, 'http_requests_total', labels)).toBe(2);
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'http_request_duration_seconds_bucket{le="0.005",method="GET",route="/v1/ticker/:symbol",status="402"} 1',
    );
    expect(text).toContain(
      'http_request_duration_seconds_bucket{le="10",method="GET",route="unmatched",status="404"} 0',
    );
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
