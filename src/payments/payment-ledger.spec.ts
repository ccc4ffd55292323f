import { InMemoryPaymentLedger } from './payment-ledger.js';

describe('InMemoryPaymentLedger', () => {
  let now = 1_000_000;
  const ledger = new InMemoryPaymentLedger(() => now);

  it('lets one request claim a payment at a time', async () => {
    expect(await ledger.claim('a')).toBe('claimed');
    expect(await ledger.claim('a')).toBe('in_flight');
    await ledger.release('a');
    expect(await ledger.claim('a')).toBe('claimed');
  });

  it('refuses a settled payment until its expiry', async () => {
    await ledger.claim('b');
    await ledger.settle('b', now + 1000);
    expect(await ledger.claim('b')).toBe('settled');
    now += 1001;
    expect(await ledger.claim('b')).toBe('claimed');
  });

  it('claims concurrently presented copies exactly once', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => ledger.claim('c')));
    expect(results.filter((result) => result === 'claimed')).toHaveLength(1);
  });

  it('stores responses by payment id until they expire', async () => {
    const response = { fingerprint: 'd', status: 200, headers: {}, body: { ok: true } };
    await ledger.storeResponse('id-1', response, now + 10);
    expect(await ledger.findResponse('id-1')).toEqual(response);
    now += 11;
    expect(await ledger.findResponse('id-1')).toBeUndefined();
  });
});
