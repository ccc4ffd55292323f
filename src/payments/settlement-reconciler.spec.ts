import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import {
  NONCE,
  PAYER,
  PAY_TO,
  authorizationUsed,
  payment,
  receipt,
  transfer,
} from '../../test/support/eip3009-receipts.js';
import { InMemoryPaymentLedger } from './payment-ledger.js';
import type { SettlementChain } from './settlement-chain.js';
import type { ReceiptEvidence } from './settlement-proof.js';
import { SettlementReconciler, type UncertainSettlement } from './settlement-reconciler.js';

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
}

const provingReceipt = receipt(transfer(PAYER, PAY_TO, 2000n), authorizationUsed(PAYER, NONCE));

function uncertain(
  onSettled: UncertainSettlement['onSettled'],
  transaction?: `0x${string}`,
): UncertainSettlement {
  return {
    payment,
    fingerprint: 'fp',
    expiresAt: Date.now() + 60_000,
    paymentId: 'order-1',
    trace: { observed: true, broadcast: true, transaction },
    onSettled,
  };
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
  let reconciler: SettlementReconciler;
  const settledBy: string[] = [];
  const onSettled = (transaction: `0x${string}`) => {
    settledBy.push(transaction);
    return Promise.resolve();
  };

  beforeEach(() => {
    chain = new ScriptedChain();
    ledger = new InMemoryPaymentLedger();
    reconciler = new SettlementReconciler(chain, ledger);
    settledBy.length = 0;
  });

  it('records the payment and its id uncertain when it starts holding them', async () => {
    const binding = { fingerprint: 'fp', signatureDigest: 's', resource: 'GET /v1/ticker/BTC' };
    const later = Date.now() + 60_000;
    await ledger.claimPaymentId('order-1', binding, later);
    await ledger.claim('fp', later);
    await reconciler.hold({ ...uncertain(onSettled), paymentId: 'order-1' });
    expect(await ledger.claim('fp', later)).toBe('uncertain');
    expect(await ledger.claimPaymentId('order-1', binding, later)).toEqual({ kind: 'uncertain' });
    reconciler.onModuleDestroy();
  });

  it('asks a ledger that could not record the uncertain outcome again at the next check', async () => {
    const later = Date.now() + 60_000;
    await ledger.claim('fp', later);
    const markUncertain = jest
      .spyOn(ledger, 'markUncertain')
      .mockRejectedValueOnce(new Error('store unavailable'));
    const held = uncertain(onSettled);
    await reconciler.hold(held);
    reconciler.onModuleDestroy();
    expect(await ledger.claim('fp', later)).toBe('in_flight');

    expect(await reconciler.check(held)).toBe('pending');
    expect(markUncertain).toHaveBeenCalledTimes(2);
    expect(await ledger.claim('fp', later)).toBe('uncertain');
  });

  it('is settled when the known transaction proves the payment, and records it', async () => {
    chain.proving.add(TX);
    expect(await reconciler.check(uncertain(onSettled, TX))).toBe('settled');
    expect(settledBy).toEqual([TX]);
    expect(await ledger.claim('fp', Date.now() + 1000)).toBe('settled');
  });

  it('finds the transaction that used the authorization when the known one did not prove it', async () => {
    chain.used = true;
    chain.usedBy = OTHER_TX;
    chain.proving.add(OTHER_TX);
    expect(await reconciler.check(uncertain(onSettled, TX))).toBe('settled');
    expect(settledBy).toEqual([OTHER_TX]);
  });

  it('stays pending while the authorization is used but its transfer is not proven', async () => {
    chain.used = true;
    chain.usedBy = OTHER_TX;
    expect(await reconciler.check(uncertain(onSettled))).toBe('pending');
    expect(settledBy).toEqual([]);
  });

  it('stays pending while unused and the chain has not passed validBefore, whatever our clock says', async () => {
    expect(await reconciler.check(uncertain(onSettled))).toBe('pending');
  });

  it('is not settled once the chain passed validBefore unused, and forgets the payment and its id', async () => {
    const binding = { fingerprint: 'fp', signatureDigest: 's', resource: 'GET /v1/ticker/BTC' };
    const later = Date.now() + 60_000;
    await ledger.claimPaymentId('order-1', binding, later);
    await ledger.markPaymentIdUncertain('order-1');
    await ledger.claim('fp', later);
    await ledger.markUncertain('fp', later);
    expect(await reconciler.check(uncertain(onSettled))).toBe('pending');
    expect(await ledger.claim('fp', later)).toBe('uncertain');

    chain.expired = true;
    expect(await reconciler.check(uncertain(onSettled))).toBe('not_settled');
    expect(settledBy).toEqual([]);
    expect(await ledger.claimPaymentId('order-1', binding, later)).toEqual({ kind: 'claimed' });
    expect(await ledger.claim('fp', later)).toBe('claimed');
  });
});

describe('SettlementReconciler.hold', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  afterAll(() => {
    Logger.overrideLogger(true);
    jest.useRealTimers();
  });

  it('looks once more just before the expiry, and records a payment the chain showed only after the last regular look', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const chain = new ScriptedChain();
    const reconciler = new SettlementReconciler(chain, new InMemoryPaymentLedger());
    const settledBy: string[] = [];
    const held = {
      ...uncertain((transaction) => {
        settledBy.push(transaction);
        return Promise.resolve();
      }, TX),
      expiresAt: Date.now() + 20_000,
    };

    await reconciler.hold(held);
    // looks at 0.25, 0.75, 1.75, 3.75 and 7.75 s find nothing; the last is due at 15 s, 5 s
    // before the expiry (the payment's records expire with it)
    await jest.advanceTimersByTimeAsync(14_900);
    chain.proving.add(TX);
    expect(settledBy).toEqual([]);
    // the last look fires a little late, as timers do
    jest.setSystemTime(Date.now() + 105);
    await jest.advanceTimersByTimeAsync(200);

    expect(settledBy).toEqual([TX]);
    expect(Date.now()).toBeLessThan(held.expiresAt);
    reconciler.onModuleDestroy();
  });
});
