import { Logger } from '@nestjs/common';
import type { SettleResponse } from '@x402/core/types';
import {
  OFFERED,
  PAYER,
  presentedPayment,
  verifiedPayment,
} from '../../test/support/payment-doubles.js';
import { acceptPayment } from './payment-acceptance.js';
import { PaymentSettler } from './payment-settler.js';
import type { PaymentConfig } from './payments.settings.js';
import type { ReceiptEvidence } from './settlement-proof.js';
import type { SettlementChain } from './settlement-chain.js';
import type { X402Paywall } from './x402-paywall.js';

const TX = `0x${'ab'.repeat(32)}` as const;
const SETTINGS = { settleTimeoutMs: 1000, facilitator: { mode: 'embedded' } } as PaymentConfig;

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
});
