import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { SettleResponse } from '@x402/core/types';
import {
  OFFERED,
  PAYER,
  presentedPayment,
  verifiedPayment,
  onEveryNetwork,
} from '../../../../test/support/payment-doubles.js';
import { authorizationUsed, receipt, transfer } from '../../../../test/support/eip3009-receipts.js';
import { settlementTraces, type SettlementTrace } from '../../facilitator/facilitator-client.js';
import { acceptPayment } from './payment-acceptance.js';
import { PaymentSettler } from './payment-settler.js';
import type { PaymentConfig } from '../../payments.settings.js';
import type { ReceiptEvidence } from '../../../chain/settlement-proof.js';
import type { SettlementChain } from '../../../chain/settlement-chain.js';
import type { X402Paywall } from '../../paywall/x402-paywall.js';

const TX = `0x${'ab'.repeat(32)}` as const;
const SETTINGS = {
  settleTimeoutMs: 1000,
  verifyTimeoutMs: 200,
  facilitator: { mode: 'embedded' },
  networks: [{ network: OFFERED.network }],
} as unknown as PaymentConfig;

/** A chain whose receipt is whatever the case gives; nothing else is asked in these cases. */
function chainWithReceipt(receipt: unknown): SettlementChain {
  return {
    receipt: () => Promise.resolve(receipt as ReceiptEvidence),
    authorizationUsed: () => Promise.reject(new Error('not asked')),
    findAuthorizationUse: () => Promise.reject(new Error('not asked')),
    expiredUnused: () => Promise.reject(new Error('not asked')),
  };
}

/** A chain whose receipts never come back (an RPC that hangs). */
const HANGING_CHAIN: SettlementChain = {
  ...chainWithReceipt(undefined),
  receipt: () => new Promise<never>(() => undefined),
};

/** A chain whose receipt reads fail. */
const FAILING_CHAIN: SettlementChain = {
  ...chainWithReceipt(undefined),
  receipt: () => Promise.reject(new Error('connection refused')),
};

function paywallSettling(settlement: SettleResponse): X402Paywall {
  return { settle: () => Promise.resolve(settlement) } as unknown as X402Paywall;
}

/**
 * A facilitator in this process (its chain calls traced) that does `steps` to the trace, then
 * answers `settlement` after `ms`; the trace it saw is kept for the test.
 */
function embeddedSettling(
  settlement: SettleResponse,
  ms: number,
  steps: (trace: SettlementTrace) => void = () => undefined,
): { paywall: X402Paywall; seen: SettlementTrace[] } {
  const seen: SettlementTrace[] = [];
  const settle = async (): Promise<SettleResponse> => {
    const trace = settlementTraces.getStore()!;
    trace.observed = true;
    steps(trace);
    seen.push(trace);
    await new Promise((resolve) => setTimeout(resolve, ms));
    return settlement;
  };
  return { paywall: { settle } as unknown as X402Paywall, seen };
}

describe('PaymentSettler', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  afterAll(() => {
    Logger.overrideLogger(true);
  });

  const payload = presentedPayment();
  const accepted = acceptPayment(payload, [OFFERED]);
  const success: SettleResponse = {
    success: true,
    transaction: TX,
    network: OFFERED.network,
    payer: PAYER,
  };

  it('calls a failure it did not foresee after asking the facilitator unknown, never an error', async () => {
    // a receipt without logs makes the proof itself throw
    const settler = new PaymentSettler(
      paywallSettling(success),
      SETTINGS,
      onEveryNetwork(chainWithReceipt({ status: 'success' })),
    );
    const outcome = await settler.settle(verifiedPayment(payload), accepted);
    expect(outcome.kind).toBe('unknown');
    expect(outcome).toMatchObject({ transaction: TX });
    expect((outcome as { reason: string }).reason).toMatch(/^settlement_error: /);
  });

  it('does not call a success settled when the receipt shows no transfer', async () => {
    const settler = new PaymentSettler(
      paywallSettling(success),
      SETTINGS,
      onEveryNetwork(chainWithReceipt({ status: 'success', logs: [] })),
    );
    const outcome = await settler.settle(verifiedPayment(payload), accepted);
    expect(outcome).toMatchObject({
      kind: 'unknown',
      reason: 'settlement_unproven: the receipt does not show the transfer of the price',
    });
  });

  describe('before its transaction leaves, a settlement in this process can be given up on for good', () => {
    it('nothing sent within X402_VERIFY_TIMEOUT_MS: unavailable (503), and it never will be sent', async () => {
      const { paywall, seen } = embeddedSettling(success, 2000);
      const started = Date.now();
      const outcome = await new PaymentSettler(paywall, SETTINGS, onEveryNetwork(null)).settle(
        verifiedPayment(payload),
        accepted,
      );
      expect(outcome.kind).toBe('unavailable');
      expect((outcome as { error: Error }).error.message).toMatch(/X402_VERIFY_TIMEOUT_MS/);
      expect(Date.now() - started).toBeLessThan(900);
      expect(seen[0]?.abandoned).toBe(true);
    });

    it('the client left before it was sent: abandoned, never sent', async () => {
      const { paywall, seen } = embeddedSettling(success, 2000);
      const departed = new AbortController();
      setTimeout(() => {
        departed.abort();
      }, 20);
      const outcome = await new PaymentSettler(paywall, SETTINGS, onEveryNetwork(null)).settle(
        verifiedPayment(payload),
        accepted,
        departed.signal,
      );
      expect(outcome).toEqual({ kind: 'abandoned' });
      expect(seen[0]?.abandoned).toBe(true);
    });

    it.each<[string, Partial<SettlementTrace>]>([
      ['once sent', { broadcast: true }],
      ['once the transaction is being prepared (an account nonce taken)', { committed: true }],
    ])('%s, it is waited for to the settlement deadline, client or not', async (_case, state) => {
      const { paywall, seen } = embeddedSettling(success, 400, (trace) => {
        Object.assign(trace, state);
      });
      const departed = new AbortController();
      departed.abort();
      const outcome = await new PaymentSettler(paywall, SETTINGS, onEveryNetwork(null)).settle(
        verifiedPayment(payload),
        accepted,
        departed.signal,
      );
      expect(outcome).toEqual({ kind: 'settled', settlement: success });
      expect(seen[0]?.abandoned).toBeUndefined();
    });

    it('a facilitator over HTTP (calls not watched) is waited for to the deadline: unknown', async () => {
      const { paywall } = embeddedSettling(success, 2000, (trace) => {
        trace.observed = false;
      });
      const outcome = await new PaymentSettler(paywall, SETTINGS, onEveryNetwork(null)).settle(
        verifiedPayment(payload),
        accepted,
      );
      expect(outcome).toMatchObject({
        kind: 'unknown',
        reason: expect.stringMatching(/^settlement_deadline/) as string,
      });
    });
  });

  describe('a settlement that ends without an answer after sending is served if the chain already shows it', () => {
    const { authorization, requirement } = accepted;
    const asset = requirement.asset;
    const proving = {
      ...receipt(
        transfer(authorization.from, authorization.to, BigInt(authorization.value), asset),
        authorizationUsed(authorization.from, authorization.nonce, asset),
      ),
      transactionHash: TX,
    };
    const short = {
      ...receipt(
        transfer(authorization.from, authorization.to, BigInt(authorization.value) - 1n, asset),
        authorizationUsed(authorization.from, authorization.nonce, asset),
      ),
      transactionHash: TX,
    };
    const sent = (trace: SettlementTrace): void => {
      Object.assign(trace, { committed: true, broadcast: true, transaction: TX });
    };
    const settleWith = (paywall: X402Paywall, chain: SettlementChain) =>
      new PaymentSettler(paywall, SETTINGS, onEveryNetwork(chain)).settle(
        verifiedPayment(payload),
        accepted,
      );

    it('its deadline came (the process stalled) and one last look finds the receipt: settled', async () => {
      const { paywall } = embeddedSettling(success, 1500, sent);
      const warn = jest.spyOn(Logger.prototype, 'warn');
      const outcome = await settleWith(paywall, chainWithReceipt(proving));
      expect(outcome).toEqual({ kind: 'settled', settlement: success });
      // what went wrong is still told, though the payment was served
      expect(warn).toHaveBeenCalledWith(
        `settlement ${TX} served from its receipt after settlement_deadline: not confirmed within 1000 ms`,
      );
      warn.mockRestore();
    });

    it.each<[string, SettlementChain]>([
      ['not mined yet', chainWithReceipt(undefined)],
      ['showing less than the price', chainWithReceipt(short)],
      ['unreadable', FAILING_CHAIN],
    ])('its deadline came and the receipt is %s: unknown', async (_case, chain) => {
      const { paywall } = embeddedSettling(success, 1500, sent);
      const outcome = await settleWith(paywall, chain);
      expect(outcome).toMatchObject({
        kind: 'unknown',
        reason: 'settlement_deadline: not confirmed within 1000 ms',
        transaction: TX,
      });
    });

    it('its deadline came and the receipt does not come back: unknown, the look bounded', async () => {
      const { paywall } = embeddedSettling(success, 1500, sent);
      const started = Date.now();
      const outcome = await settleWith(paywall, HANGING_CHAIN);
      expect(outcome).toMatchObject({ kind: 'unknown', transaction: TX });
      expect(Date.now() - started).toBeLessThan(1000 + 500 + 400);
    });

    it('nothing was sent when the deadline came: unknown, the chain not asked', async () => {
      const { paywall } = embeddedSettling(success, 1500, (trace) => {
        trace.observed = false;
      });
      const asked: string[] = [];
      const chain: SettlementChain = {
        ...chainWithReceipt(proving),
        receipt: (transaction) => {
          asked.push(transaction);
          return Promise.resolve(proving);
        },
      };
      const outcome = await settleWith(paywall, chain);
      expect(outcome).toMatchObject({ kind: 'unknown', transaction: undefined });
      expect(asked).toEqual([]);
    });

    it('the facilitator failed after its transaction was mined: settled from the receipt it read', async () => {
      const paywall = {
        settle: () => {
          const trace = settlementTraces.getStore()!;
          Object.assign(trace, { observed: true, receipt: proving });
          sent(trace);
          return Promise.reject(new Error('facilitator settle failed: fetch failed'));
        },
      } as unknown as X402Paywall;
      const warn = jest.spyOn(Logger.prototype, 'warn');
      const outcome = await settleWith(paywall, FAILING_CHAIN);
      expect(outcome).toEqual({ kind: 'settled', settlement: success });
      expect(warn).toHaveBeenCalledWith(
        `settlement ${TX} served from its receipt after settlement_error: facilitator settle failed: fetch failed`,
      );
      warn.mockRestore();
    });

    it('the facilitator failed after sending, the receipt not shown: unknown', async () => {
      const paywall = {
        settle: () => {
          sent(settlementTraces.getStore()!);
          return Promise.reject(new Error('facilitator settle failed: fetch failed'));
        },
      } as unknown as X402Paywall;
      const outcome = await settleWith(paywall, chainWithReceipt(undefined));
      expect(outcome).toMatchObject({
        kind: 'unknown',
        reason: 'settlement_error: facilitator settle failed: fetch failed',
        transaction: TX,
      });
    });
  });
});
