import { encodeAbiParameters, encodeEventTopics } from 'viem';
import type { UncertainSale } from '../../src/payments/schemes/exact/uncertain-sale.js';
import type { AcceptedPayment } from '../../src/payments/schemes/exact/payment-acceptance.js';
import { EIP3009_EVENTS, type ReceiptEvidence } from '../../src/chain/settlement-proof.js';

/** Receipts built from real EIP-3009 event encodings, for tests of the settlement proof. */
export const USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
export const OTHER_TOKEN = '0x4200000000000000000000000000000000000006';
export const PAYER = '0x1111111111111111111111111111111111111111';
export const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
export const NONCE = `0x${'ab'.repeat(32)}` as const;

export type Log = ReceiptEvidence['logs'][number];

export const payment = {
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

export function transfer(from: string, to: string, value: bigint, token: string = USDC): Log {
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

export function authorizationUsed(
  authorizer: string,
  nonce: `0x${string}`,
  token: string = USDC,
): Log {
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

export function receipt(...logs: Log[]): ReceiptEvidence {
  return { status: 'success', logs };
}

/** An uncertain sale of `payment`, as the settlement interceptor records it. */
export function uncertainSale(
  fingerprint: string,
  expiresAt: number,
  extra: Partial<UncertainSale> = {},
): UncertainSale {
  return {
    fingerprint,
    expiresAt,
    route: '/v1/ticker/:symbol',
    version: 2,
    payment,
    body: { currency: 'USD', price: { BTC: 97000.12 } },
    ...extra,
  };
}
