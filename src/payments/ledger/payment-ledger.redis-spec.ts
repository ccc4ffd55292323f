import { uncertainSale } from '../../../test/support/eip3009-receipts.js';
import { InMemoryPaymentLedger, type PaymentLedger } from './payment-ledger.js';
import { RedisPaymentLedger } from './redis-payment-ledger.js';
import { connectRedis } from '../../shared-state/redis-connection.js';
import { startRedisServer } from '../../../test/support/redis-server.js';
import { describeWithRedis, useRedis } from '../../../test/support/redis-suite.js';

/** Entries given this expiry are waited out, on the real clock both stores share with Redis. */
const EXPIRY_MS = 150;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One contract, two stores: whatever the in-memory ledger promises, the Redis one keeps. */
function ledgerContract(ledgerOf: () => PaymentLedger): void {
  let ledger: PaymentLedger;
  beforeAll(() => {
    ledger = ledgerOf();
  });
  const later = () => Date.now() + 60_000;

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
    await ledger.settle('c', Date.now() + EXPIRY_MS);
    await ledger.release('c');
    expect(await ledger.claim('c', later())).toBe('settled');
    await sleep(EXPIRY_MS + 20);
    expect(await ledger.claim('c', later())).toBe('claimed');
  });

  it('refuses a payment whose settlement outcome is unknown', async () => {
    await ledger.claim('d', later());
    await ledger.markUncertain(uncertainSale('d', later()));
    await ledger.release('d');
    expect(await ledger.claim('d', later())).toBe('uncertain');
  });

  it('keeps an uncertain sale for any reconciler until it is resolved or expires', async () => {
    const listed = async (): Promise<string[]> =>
      (await ledger.uncertainSales())
        .map((sale) => sale.fingerprint)
        .filter((fingerprint) => fingerprint.startsWith('u'))
        .sort();
    const sale = uncertainSale('u1', later(), {
      paymentId: 'id-u1',
      transaction: `0x${'11'.repeat(32)}`,
    });
    await ledger.markUncertain(sale);
    await ledger.markUncertain(uncertainSale('u2', later()));
    await ledger.markUncertain(uncertainSale('u3', Date.now() + EXPIRY_MS));
    expect(await listed()).toEqual(['u1', 'u2', 'u3']);
    expect((await ledger.uncertainSales()).find((kept) => kept.fingerprint === 'u1')).toEqual(sale);

    await ledger.resolveSettled('u1', later());
    expect(await ledger.claim('u1', later())).toBe('settled');
    await ledger.resolveNeverSettled('u2', undefined);
    expect(await ledger.claim('u2', later())).toBe('claimed');
    await sleep(EXPIRY_MS + 20);
    expect(await listed()).toEqual([]);
  });

  it('never reopens a settled sale: a late record is refused, and a sale is resolved settled once', async () => {
    await ledger.markUncertain(uncertainSale('s1', later()));
    expect(await ledger.resolveSettled('s1', later())).toBe(true);
    expect(await ledger.resolveSettled('s1', later())).toBe(false);
    // a record the ledger applies after another instance resolved the sale
    expect(await ledger.markUncertain(uncertainSale('s1', later()))).toBe('resolved');
    expect(await ledger.claim('s1', later())).toBe('settled');
    expect((await ledger.uncertainSales()).map((sale) => sale.fingerprint)).not.toContain('s1');
  });

  it('marks a payment-identifier uncertain only while it is bound to that payment', async () => {
    const binding = { fingerprint: 'other', signatureDigest: 's', resource: 'GET /v1/ticker/BTC' };
    await ledger.claimPaymentId('id-bound-elsewhere', binding, later());
    await ledger.markUncertain(uncertainSale('s2', later(), { paymentId: 'id-bound-elsewhere' }));
    expect(await ledger.claimPaymentId('id-bound-elsewhere', binding, later())).toEqual({
      kind: 'in_flight',
    });
  });

  it('lets an in-flight claim expire, so a lost request cannot block a payment for ever', async () => {
    await ledger.claim('e', Date.now() + EXPIRY_MS);
    await sleep(EXPIRY_MS + 20);
    expect(await ledger.claim('e', later())).toBe('claimed');
  });

  it('lets a stored response expire with its id', async () => {
    const binding = { fingerprint: 'x', signatureDigest: 's', resource: 'GET /v1/ticker/BTC' };
    await ledger.claimPaymentId('id-x', binding, later());
    const response = { status: 200, headers: { a: 'b' }, body: { ok: true } };
    await ledger.storeResponse('id-x', 'x', response, Date.now() + EXPIRY_MS);
    expect(await ledger.claimPaymentId('id-x', binding, later())).toEqual({
      kind: 'stored',
      response,
    });
    await sleep(EXPIRY_MS + 20);
    expect(await ledger.claimPaymentId('id-x', binding, later())).toEqual({ kind: 'claimed' });
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

    it('says whether an id holds a stored response, binding nothing', async () => {
      expect(await ledger.hasStoredResponse('id-peek')).toBe(false);
      // reading bound nothing: another payment may still claim the id
      expect(await ledger.claimPaymentId('id-peek', binding, later())).toEqual({ kind: 'claimed' });
      expect(await ledger.hasStoredResponse('id-peek')).toBe(false);
      const response = { status: 200, headers: {}, body: { ok: true } };
      await ledger.storeResponse('id-peek', 'f', response, Date.now() + EXPIRY_MS);
      expect(await ledger.hasStoredResponse('id-peek')).toBe(true);
      await sleep(EXPIRY_MS + 20);
      expect(await ledger.hasStoredResponse('id-peek')).toBe(false);
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
      await ledger.markUncertain(uncertainSale('f', later(), { paymentId: 'id-4' }));
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
      await ledger.claimPaymentId('id-n1', { ...binding, fingerprint: 'n1' }, later());
      await ledger.markUncertain(uncertainSale('n1', later(), { paymentId: 'id-n1' }));
      await ledger.resolveNeverSettled('n1', 'id-n1');
      expect(await ledger.claim('n1', later())).toBe('claimed');
      expect(
        (await ledger.claimPaymentId('id-n1', { ...binding, fingerprint: 'n1' }, later())).kind,
      ).toBe('claimed');

      await ledger.settle('n2', later());
      await ledger.claimPaymentId('id-n2', { ...binding, fingerprint: 'other' }, later());
      await ledger.markUncertain(uncertainSale('other', later(), { paymentId: 'id-n2' }));
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
}

describe('InMemoryPaymentLedger', () => {
  ledgerContract(() => new InMemoryPaymentLedger());
});

describeWithRedis('RedisPaymentLedger', () => {
  const shared = useRedis();

  ledgerContract(() => new RedisPaymentLedger(shared.client));

  it('claims a payment presented on two connections (two instances) exactly once', async () => {
    const other = await connectRedis(shared.server.url);
    try {
      const ledgers = [new RedisPaymentLedger(shared.client), new RedisPaymentLedger(other)];
      const results = await Promise.all(
        Array.from({ length: 21 }, (_, i) => ledgers[i % 2]!.claim('two', Date.now() + 60_000)),
      );
      expect(results.filter((result) => result === 'claimed')).toHaveLength(1);
      expect(results.filter((result) => result === 'in_flight')).toHaveLength(20);
    } finally {
      other.destroy();
    }
  });

  it('bounds memory: every key it writes expires', async () => {
    const ledger = new RedisPaymentLedger(shared.client);
    await ledger.claim('ttl', Date.now() + 60_000);
    await ledger.claimPaymentId(
      'ttl-id',
      { fingerprint: 'ttl', signatureDigest: 's', resource: 'r' },
      Date.now() + 60_000,
    );
    const keys = await shared.client.keys('x402:ledger:*');
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(await shared.client.pTTL(key)).toBeGreaterThan(0);
  });

  it('answers 503 shared_state_unavailable, never a claim, once Redis is gone', async () => {
    const lost = await startRedisServer();
    const client = await connectRedis(lost.url);
    const ledger = new RedisPaymentLedger(client);
    try {
      expect(await ledger.claim('gone', Date.now() + 60_000)).toBe('claimed');
      await lost.kill();
      await expect(ledger.claim('gone-2', Date.now() + 60_000)).rejects.toMatchObject({
        code: 'shared_state_unavailable',
        status: 503,
      });
    } finally {
      client.destroy();
    }
  });

  it('answers 503 within its deadline when Redis stops answering (a paused server)', async () => {
    const ledger = new RedisPaymentLedger(shared.client, 200);
    const admin = await connectRedis(shared.server.url);
    try {
      // without a deadline the write would simply wait the pause out and succeed
      await admin.sendCommand(['CLIENT', 'PAUSE', '1500', 'WRITE']);
      await expect(ledger.settle('paused', Date.now() + 60_000)).rejects.toMatchObject({
        code: 'shared_state_unavailable',
        status: 503,
      });
    } finally {
      await admin.sendCommand(['CLIENT', 'UNPAUSE']);
      admin.destroy();
    }
  });

  it('refuses to start when Redis cannot be reached, naming REDIS_URL', async () => {
    const gone = await startRedisServer();
    await gone.stop();
    await expect(connectRedis(gone.url)).rejects.toThrow(
      /REDIS_URL is set but Redis cannot be reached/,
    );
  });
});
