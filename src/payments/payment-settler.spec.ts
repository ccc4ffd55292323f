import { Logger } from '@nestjs/common';
import type { SettleResponse } from '@x402/core/types';
import {
  OFFERED,
  PAYER,
  presentedPayment,
  verifiedPayment,
} from '../../test/support/payment-doubles.js';
import { settlementTraces, type SettlementTrace } from './facilitator-client.js';
import { acceptPayment } from './payment-acceptance.js';
import { PaymentSettler } from './payment-settler.js';
import type { PaymentConfig } from './payments.settings.js';
import type { ReceiptEvidence } from './settlement-proof.js';
import type { SettlementChain } from './settlement-chain.js';
import type { X402Paywall } from './x402-paywall.js';

const TX = `0x${'ab'.repeat(32)}` as const;
const SETTINGS = {
  settleTimeoutMs: 1000,
  verifyTimeoutMs: 200,
  facilitator: { mode: 'embedded' },
} as PaymentConfig;

/** A chain whose receipt is whatever the case gives; nothing else is asked in these cases. */
function chainWithReceipt(receipt: unknown): SettlementChain {
  return {
    receipt: () => Promise.resolve(receipt as ReceiptEvidence),
    authorizationUsed: () => Promise.reject(new Error('not asked')),
    findAuthorizationUse: () => Promise.reject(new Error('not asked')),
    expiredUnused: () => Promise.reject(new Error('not asked')),
  };
}

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
      chainWithReceipt({ status: 'success' }),
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
      chainWithReceipt({ status: 'success', logs: [] }),
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
      const outcome = await new PaymentSettler(paywall, SETTINGS, null).settle(
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
      const outcome = await new PaymentSettler(paywall, SETTINGS, null).settle(
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
      const outcome = await new PaymentSettler(paywall, SETTINGS, null).settle(
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
      const outcome = await new PaymentSettler(paywall, SETTINGS, null).settle(
        verifiedPayment(payload),
        accepted,
      );
      expect(outcome).toMatchObject({
        kind: 'unknown',
        reason: expect.stringMatching(/^settlement_deadline/) as string,
      });
    });
  });
});
