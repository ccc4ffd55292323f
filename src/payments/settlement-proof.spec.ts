import { encodeAbiParameters, encodeEventTopics } from 'viem';
import type { AcceptedPayment } from './payment-acceptance.js';
import { EIP3009_EVENTS, receiptProvesPayment, type ReceiptEvidence } from './settlement-proof.js';

const USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const OTHER_TOKEN = '0x4200000000000000000000000000000000000006';
const PAYER = '0x1111111111111111111111111111111111111111';
const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const NONCE = `0x${'ab'.repeat(32)}` as const;

type Log = ReceiptEvidence['logs'][number];

const payment = {
  requirement: { asset: USDC, payTo: PAY_TO, amount: '2000' },
  authorization: {
    from: PAYER,
    to: PAY_TO,
    value: '2000',
    validAfter: '0',
    validBefore: '9999999999',
    nonce: NONCE,
  },
} as unknown as AcceptedPayment;

function transfer(from: string, to: string, value: bigint, token: string = USDC): Log {
  return log(
    token,
    encodeEventTopics({
      abi: EIP3009_EVENTS,
      eventName: 'Transfer',
      args: { from: from as `0x${string}`, to: to as `0x${string}` },
    }),
    encodeAbiParameters([{ type: 'uint256' }], [value]),
  );
}

function authorizationUsed(authorizer: string, nonce: `0x${string}`, token: string = USDC): Log {
  return log(
    token,
    encodeEventTopics({
      abi: EIP3009_EVENTS,
      eventName: 'AuthorizationUsed',
      args: { authorizer: authorizer as `0x${string}`, nonce },
    }),
    '0x',
  );
}

function log(address: string, topics: readonly unknown[], data: `0x${string}`): Log {
  return { address, topics, data } as unknown as Log;
}

function receipt(...logs: Log[]): ReceiptEvidence {
  return { status: 'success', logs };
}

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
