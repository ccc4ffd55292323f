import {
  NONCE,
  OTHER_TOKEN,
  PAYER,
  PAY_TO,
  authorizationUsed,
  payment,
  receipt,
  transfer,
} from '../../test/support/eip3009-receipts.js';
import { receiptProvesPayment, type ReceiptEvidence } from './settlement-proof.js';

describe('receiptProvesPayment', () => {
  it('accepts the exact transfer and the used authorization from the offered token', () => {
    expect(
      receiptProvesPayment(
        receipt(transfer(PAYER, PAY_TO, 2000n), authorizationUsed(PAYER, NONCE)),
        payment,
      ),
    ).toBe(true);
  });

  it('refuses a reverted transaction whatever it logged', () => {
    const reverted: ReceiptEvidence = {
      status: 'reverted',
      logs: [transfer(PAYER, PAY_TO, 2000n), authorizationUsed(PAYER, NONCE)],
    };
    expect(receiptProvesPayment(reverted, payment)).toBe(false);
  });

  it('refuses a successful transaction that moved nothing (a proxy without code)', () => {
    expect(receiptProvesPayment(receipt(), payment)).toBe(false);
  });

  it.each([
    ['a smaller amount', transfer(PAYER, PAY_TO, 1999n), authorizationUsed(PAYER, NONCE)],
    ['another receiver', transfer(PAYER, PAYER, 2000n), authorizationUsed(PAYER, NONCE)],
    ['another payer', transfer(PAY_TO, PAY_TO, 2000n), authorizationUsed(PAYER, NONCE)],
    [
      'another token',
      transfer(PAYER, PAY_TO, 2000n, OTHER_TOKEN),
      authorizationUsed(PAYER, NONCE, OTHER_TOKEN),
    ],
    [
      'another authorization',
      transfer(PAYER, PAY_TO, 2000n),
      authorizationUsed(PAYER, `0x${'cd'.repeat(32)}`),
    ],
    [
      'the authorization event alone',
      authorizationUsed(PAYER, NONCE),
      authorizationUsed(PAYER, NONCE),
    ],
    ['the transfer alone', transfer(PAYER, PAY_TO, 2000n), transfer(PAYER, PAY_TO, 2000n)],
  ])('refuses %s', (_case, first, second) => {
    expect(receiptProvesPayment(receipt(first, second), payment)).toBe(false);
  });

  it('finds the payment among unrelated logs, with addresses in any letter case', () => {
    expect(
      receiptProvesPayment(
        receipt(
          transfer(PAYER, PAYER, 5n, OTHER_TOKEN),
          transfer(PAYER.toUpperCase().replace('0X', '0x'), PAY_TO.toLowerCase(), 2000n),
          authorizationUsed(PAYER, NONCE),
        ),
        payment,
      ),
    ).toBe(true);
  });
});
