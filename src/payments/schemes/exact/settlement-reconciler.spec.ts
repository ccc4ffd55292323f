import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import {
  NONCE,
  PAYER,
  PAY_TO,
  authorizationUsed,
  receipt,
  transfer,
  uncertainSale,
} from '../../../../test/support/eip3009-receipts.js';
import { onEveryNetwork } from '../../../../test/support/payment-doubles.js';
import { InMemoryPaymentLedger } from '../../ledger/payment-ledger.js';
import type { UncertainSale } from './uncertain-sale.js';
import { LocalReconcileClaims, type ReconcileClaims } from './reconcile-claims.js';
import type { SettlementChain } from '../../../chain/settlement-chain.js';
import type { ReceiptEvidence } from '../../../chain/settlement-proof.js';
import { SWEEP_EVERY_MS, SettlementReconciler } from './settlement-reconciler.js';
import type { SoldAnswers } from './sold-answers.js';

const TX = `0x${'11'.repeat(32)}` as const;
const OTHER_TX = `0x${'22'.repeat(32)}` as const;

/** A chain the test scripts: which transactions have a receipt proving the payment, and its state. */
class ScriptedChain implements SettlementChain {
  used = false;
  expired = false;
  usedBy: `0x${string}` | undefined;
  proving = new Set<string>();

  receipt(transaction: `0x${string}`): Promise<ReceiptEvidence | undefined> {
    return Promise.resolve(this.proving.has(transaction) ? provingReceipt : undefined);
  }
  authorizationUsed(): Promise<boolean> {
    return Promise.resolve(this.used);
  }
  findAuthorizationUse(): Promise<`0x${string}` | undefined> {
    return Promise.resolve(this.usedBy);
  }
  expiredUnused(): Promise<boolean> {
    return Promise.resolve(this.expired && !this.used);
  }

  /** The authorization was used by `transaction`, whose receipt proves the payment. */
  paidBy(transaction: `0x${string}`): void {
    this.used = true;
    this.usedBy = transaction;
    this.proving.add(transaction);
  }
}

const provingReceipt = receipt(transfer(PAYER, PAY_TO, 2000n), authorizationUsed(PAYER, NONCE));

/** Records the sales the reconciler shows paid, and by which transaction. */
class RecordingSold {
  readonly reconciled: { fingerprint: string; transaction: string }[] = [];

  reconciledBy(): string[] {
    return this.reconciled.map(({ transaction }) => transaction);
  }

  asSoldAnswers(): SoldAnswers {
    return {
      reconciled: (sale: UncertainSale, transaction: `0x${string}`) => {
        this.reconciled.push({ fingerprint: sale.fingerprint, transaction });
        return Promise.resolve();
      },
    } as unknown as SoldAnswers;
  }
}

/** Claims another instance may hold: `heldElsewhere` are refused; taken and released are recorded. */
class RecordingClaims implements ReconcileClaims {
  readonly heldElsewhere = new Set<string>();
  readonly taken: string[] = [];
  readonly released: string[] = [];

  take(fingerprint: string) {
    if (this.heldElsewhere.has(fingerprint)) return Promise.resolve(undefined);
    this.taken.push(fingerprint);
    return Promise.resolve({
      release: () => {
        this.released.push(fingerprint);
        return Promise.resolve();
      },
    });
  }
}

function sale(extra: Partial<UncertainSale> = {}): UncertainSale {
  return uncertainSale('fp', Date.now() + 60_000, { paymentId: 'order-1', ...extra });
}

describe('SettlementReconciler.check', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  afterAll(() => {
    Logger.overrideLogger(true);
  });

  let chain: ScriptedChain;
  let ledger: InMemoryPaymentLedger;
  let sold: RecordingSold;
  let reconciler: SettlementReconciler;
  const binding = { fingerprint: 'fp', signatureDigest: 's', resource: 'GET /v1/ticker/BTC' };

  beforeEach(() => {
    chain = new ScriptedChain();
    ledger = new InMemoryPaymentLedger();
    sold = new RecordingSold();
    reconciler = new SettlementReconciler(
      onEveryNetwork(chain),
      ledger,
      new LocalReconcileClaims(),
      sold.asSoldAnswers(),
      new SchedulerRegistry(),
    );
  });

  afterEach(async () => {
    await reconciler.onApplicationShutdown();
  });

  it('records the payment and its id uncertain, and the sale for any instance, when it starts holding them', async () => {
    const later = Date.now() + 60_000;
    await ledger.claimPaymentId('order-1', binding, later);
    await ledger.claim('fp', later);
    await reconciler.hold(sale());
    expect(await ledger.claim('fp', later)).toBe('uncertain');
    expect(await ledger.claimPaymentId('order-1', binding, later)).toEqual({ kind: 'uncertain' });
    expect(await ledger.uncertainSales()).toEqual(
      [sale()].map((kept) => ({ ...kept, expiresAt: expect.any(Number) as unknown })),
    );
  });

  it('asks a ledger that could not record the uncertain outcome again at the next check', async () => {
    const later = Date.now() + 60_000;
    await ledger.claim('fp', later);
    const markUncertain = jest
      .spyOn(ledger, 'markUncertain')
      .mockRejectedValueOnce(new Error('store unavailable'));
    const held = sale();
    await reconciler.hold(held);
    expect(await ledger.claim('fp', later)).toBe('in_flight');

    expect(await reconciler.check(held)).toBe('pending');
    expect(markUncertain).toHaveBeenCalledTimes(2);
    expect(await ledger.claim('fp', later)).toBe('uncertain');
  });

  it('is settled when the known transaction proves the payment, and records it', async () => {
    chain.proving.add(TX);
    await ledger.markUncertain(sale({ transaction: TX }));
    expect(await reconciler.check(sale({ transaction: TX }))).toBe('settled');
    expect(sold.reconciledBy()).toEqual([TX]);
    expect(await ledger.claim('fp', Date.now() + 1000)).toBe('settled');
    expect(await ledger.uncertainSales()).toEqual([]);
  });

  it("uses the transaction the local settlement's trace learnt after the answer", async () => {
    chain.proving.add(TX);
    const trace = { observed: true, broadcast: true, transaction: TX };
    expect(await reconciler.check(sale(), trace)).toBe('settled');
    expect(sold.reconciledBy()).toEqual([TX]);
  });

  it('finds the transaction that used the authorization when the known one did not prove it', async () => {
    chain.used = true;
    chain.usedBy = OTHER_TX;
    chain.proving.add(OTHER_TX);
    expect(await reconciler.check(sale({ transaction: TX }))).toBe('settled');
    expect(sold.reconciledBy()).toEqual([OTHER_TX]);
  });

  it('stays pending while the authorization is used but its transfer is not proven', async () => {
    chain.used = true;
    chain.usedBy = OTHER_TX;
    expect(await reconciler.check(sale())).toBe('pending');
    expect(sold.reconciledBy()).toEqual([]);
  });

  it('stays pending while unused and the chain has not passed validBefore, whatever our clock says', async () => {
    expect(await reconciler.check(sale())).toBe('pending');
  });

  it('is not settled once the chain passed validBefore unused, and forgets the payment, its id and the sale', async () => {
    const later = Date.now() + 60_000;
    await ledger.claimPaymentId('order-1', binding, later);
    await ledger.claim('fp', later);
    await ledger.markUncertain(sale());
    expect(await reconciler.check(sale())).toBe('pending');
    expect(await ledger.claim('fp', later)).toBe('uncertain');

    chain.expired = true;
    expect(await reconciler.check(sale())).toBe('not_settled');
    expect(sold.reconciledBy()).toEqual([]);
    expect(await ledger.claimPaymentId('order-1', binding, later)).toEqual({ kind: 'claimed' });
    expect(await ledger.claim('fp', later)).toBe('claimed');
    expect(await ledger.uncertainSales()).toEqual([]);
  });
});

describe('SettlementReconciler over time', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  afterAll(() => {
    Logger.overrideLogger(true);
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  function reconcilerOn(
    chain: ScriptedChain,
    ledger: InMemoryPaymentLedger,
    sold: RecordingSold,
    claims: ReconcileClaims = new LocalReconcileClaims(),
  ): SettlementReconciler {
    return new SettlementReconciler(
      onEveryNetwork(chain),
      ledger,
      claims,
      sold.asSoldAnswers(),
      new SchedulerRegistry(),
    );
  }

  it('looks once more just before the expiry, and records a payment the chain showed only after the last regular look', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const chain = new ScriptedChain();
    const sold = new RecordingSold();
    const reconciler = reconcilerOn(chain, new InMemoryPaymentLedger(), sold);
    const held = sale({ transaction: TX, expiresAt: Date.now() + 20_000 });

    await reconciler.hold(held);
    // looks at 0.25, 0.75, 1.75, 3.75 and 7.75 s find nothing; the last is due at 15 s, 5 s
    // before the expiry (the payment's records expire with it)
    await jest.advanceTimersByTimeAsync(14_900);
    chain.proving.add(TX);
    expect(sold.reconciledBy()).toEqual([]);
    // the last look fires a little late, as timers do
    jest.setSystemTime(Date.now() + 105);
    await jest.advanceTimersByTimeAsync(200);

    expect(sold.reconciledBy()).toEqual([TX]);
    expect(Date.now()).toBeLessThan(held.expiresAt);
    await reconciler.onApplicationShutdown();
  });

  it('takes over, at its next sweep, a sale another instance recorded and nobody reconciles', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const chain = new ScriptedChain();
    const ledger = new InMemoryPaymentLedger();
    const sold = new RecordingSold();
    const claims = new RecordingClaims();
    // the instance that answered 502 recorded it, then died
    await ledger.markUncertain(sale({ expiresAt: Date.now() + 60_000 }));
    chain.paidBy(TX);
    const reconciler = reconcilerOn(chain, ledger, sold, claims);
    reconciler.onApplicationBootstrap();

    await jest.advanceTimersByTimeAsync(SWEEP_EVERY_MS + 300);
    expect(claims.taken).toEqual(['fp']);
    expect(sold.reconciledBy()).toEqual([TX]);
    expect(claims.released).toEqual(['fp']);
    expect(await ledger.uncertainSales()).toEqual([]);
    await reconciler.onApplicationShutdown();
  });

  it('leaves a sale alone while another instance holds its claim', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const chain = new ScriptedChain();
    const ledger = new InMemoryPaymentLedger();
    const sold = new RecordingSold();
    const claims = new RecordingClaims();
    claims.heldElsewhere.add('fp');
    await ledger.markUncertain(sale({ expiresAt: Date.now() + 60_000 }));
    chain.paidBy(TX);
    const reconciler = reconcilerOn(chain, ledger, sold, claims);
    reconciler.onApplicationBootstrap();

    await jest.advanceTimersByTimeAsync(3 * SWEEP_EVERY_MS);
    expect(sold.reconciledBy()).toEqual([]);
    // the holder went away: its claim expired
    claims.heldElsewhere.clear();
    await jest.advanceTimersByTimeAsync(SWEEP_EVERY_MS + 300);
    expect(sold.reconciledBy()).toEqual([TX]);
    await reconciler.onApplicationShutdown();
  });

  it('hands its sales over on shutdown: claims released, nothing looked at after', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const chain = new ScriptedChain();
    const ledger = new InMemoryPaymentLedger();
    const sold = new RecordingSold();
    const claims = new RecordingClaims();
    const reconciler = reconcilerOn(chain, ledger, sold, claims);
    reconciler.onApplicationBootstrap();
    await reconciler.hold(sale({ expiresAt: Date.now() + 60_000 }));
    expect(claims.taken).toEqual(['fp']);

    await reconciler.onApplicationShutdown();
    expect(claims.released).toEqual(['fp']);
    chain.paidBy(TX);
    await jest.advanceTimersByTimeAsync(10 * SWEEP_EVERY_MS);
    expect(sold.reconciledBy()).toEqual([]);
    expect(claims.taken).toEqual(['fp']);
  });
});
