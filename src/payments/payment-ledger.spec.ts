import { InMemoryPaymentLedger } from './payment-ledger.js';

describe('InMemoryPaymentLedger', () => {
  let now = 1_000_000;
  const ledger = new InMemoryPaymentLedger(() => now);
  const later = () => now + 60_000;

  it('lets one request claim a payment at a time', async () => {
    expect(await ledger.claim('a', later())).toBe('claimed');
    expect(await ledger.claim('a', later())).toBe('in_flight');
    await ledger.release('a');
    expect(await ledger.claim('a', later())).toBe('claimed');
  });

  it('claims concurrently presented copies exactly once', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => ledger.claim('b', later())));
    expect(results.filter((result) => result === 'claimed')).toHaveLength(1);
  });

  it('refuses a settled payment until its expiry, and a release cannot undo a settlement', async () => {
    await ledger.claim('c', later());
    await ledger.settle('c', now + 1000);
    await ledger.release('c');
    expect(await ledger.claim('c', later())).toBe('settled');
    now += 1001;
    expect(await ledger.claim('c', later())).toBe('claimed');
  });

  it('refuses a payment whose settlement outcome is unknown', async () => {
    await ledger.claim('d', later());
    await ledger.markUncertain('d', later());
    await ledger.release('d');
    expect(await ledger.claim('d', later())).toBe('uncertain');
  });

  it('lets an in-flight claim expire, so a lost request cannot block a payment for ever', async () => {
    await ledger.claim('e', now + 10);
    now += 11;
    expect(await ledger.claim('e', later())).toBe('claimed');
  });

  describe('payment-identifier', () => {
    const binding = { fingerprint: 'f', signatureDigest: 's', resource: 'GET /v1/ticker/BTC' };

    it('binds an id to one payment and resource, then serves its stored response', async () => {
      expect(await ledger.claimPaymentId('id-1', binding, later())).toEqual({ kind: 'claimed' });
      expect(await ledger.claimPaymentId('id-1', binding, later())).toEqual({ kind: 'in_flight' });
      const response = { status: 200, headers: {}, body: { ok: true } };
      await ledger.storeResponse('id-1', 'f', response, later());
      expect(await ledger.claimPaymentId('id-1', binding, later())).toEqual({
        kind: 'stored',
        response,
      });
    });

    it('is a conflict with another payment or another resource, even while in flight', async () => {
      await ledger.claimPaymentId('id-2', binding, later());
      expect(
        await ledger.claimPaymentId('id-2', { ...binding, fingerprint: 'g' }, later()),
      ).toEqual({
        kind: 'conflict',
      });
      expect(
        await ledger.claimPaymentId(
          'id-2',
          { ...binding, resource: 'GET /v1/all-tickers' },
          later(),
        ),
      ).toEqual({
        kind: 'conflict',
      });
      expect(
        await ledger.claimPaymentId('id-2', { ...binding, signatureDigest: 'corrupted' }, later()),
      ).toEqual({ kind: 'conflict' });
    });

    it('while its settlement is unknown, says so; once reconciled, serves the stored response', async () => {
      await ledger.claimPaymentId('id-4', binding, later());
      await ledger.markPaymentIdUncertain('id-4');
      await ledger.releasePaymentId('id-4');
      expect(await ledger.claimPaymentId('id-4', binding, later())).toEqual({ kind: 'uncertain' });
      const response = { status: 200, headers: {}, body: 'reconciled' };
      await ledger.storeResponse('id-4', 'f', response, later());
      expect(await ledger.claimPaymentId('id-4', binding, later())).toEqual({
        kind: 'stored',
        response,
      });
    });

    it('stores a response only under an id still bound to the payment that bought it', async () => {
      await ledger.claimPaymentId('id-5', binding, later());
      await ledger.storeResponse(
        'id-5',
        'another payment',
        { status: 200, headers: {}, body: 'x' },
        later(),
      );
      expect(await ledger.claimPaymentId('id-5', binding, later())).toEqual({ kind: 'in_flight' });
      await ledger.storeResponse(
        'never-bound',
        'f',
        { status: 200, headers: {}, body: 'x' },
        later(),
      );
      expect(await ledger.claimPaymentId('never-bound', binding, later())).toEqual({
        kind: 'claimed',
      });
    });

    it('forgets a payment shown never settled, but never a settled one or an id bound elsewhere', async () => {
      await ledger.claim('n1', later());
      await ledger.markUncertain('n1', later());
      await ledger.claimPaymentId('id-n1', { ...binding, fingerprint: 'n1' }, later());
      await ledger.markPaymentIdUncertain('id-n1');
      await ledger.resolveNeverSettled('n1', 'id-n1');
      expect(await ledger.claim('n1', later())).toBe('claimed');
      expect(
        (await ledger.claimPaymentId('id-n1', { ...binding, fingerprint: 'n1' }, later())).kind,
      ).toBe('claimed');

      await ledger.settle('n2', later());
      await ledger.claimPaymentId('id-n2', { ...binding, fingerprint: 'other' }, later());
      await ledger.markPaymentIdUncertain('id-n2');
      await ledger.resolveNeverSettled('n2', 'id-n2');
      expect(await ledger.claim('n2', later())).toBe('settled');
      expect(
        (await ledger.claimPaymentId('id-n2', { ...binding, fingerprint: 'other' }, later())).kind,
      ).toBe('uncertain');
    });

    it('frees an id whose request was not answered, but never one with a stored response', async () => {
      await ledger.claimPaymentId('id-3', binding, later());
      await ledger.releasePaymentId('id-3');
      expect(
        await ledger.claimPaymentId('id-3', { ...binding, fingerprint: 'h' }, later()),
      ).toEqual({ kind: 'claimed' });
      await ledger.storeResponse('id-3', 'h', { status: 200, headers: {}, body: 1 }, later());
      await ledger.releasePaymentId('id-3');
      expect(
        (await ledger.claimPaymentId('id-3', { ...binding, fingerprint: 'h' }, later())).kind,
      ).toBe('stored');
    });
  });
});
