import { EventEmitter } from 'node:events';
import { createHash, randomBytes } from 'node:crypto';
import type { ExecutionContext } from '@nestjs/common';
import type { HTTPRequestContext } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { Channel } from '@x402/evm/batch-settlement/server';
import type { ChannelConfig } from '../../src/payments/schemes/batch-settlement/batch-acceptance.js';
import { MetricsService } from '../../src/metrics/metrics.service.js';
import type { SettlementChain, SettlementChains } from '../../src/chain/settlement-chain.js';
import type { AcceptedPayment } from '../../src/payments/schemes/exact/payment-acceptance.js';
import type { RequestWithPayment } from '../../src/payments/paywall/payment-errors.js';
import type { PaymentIdBinding } from '../../src/payments/ledger/payment-ledger.js';
import type { PaymentChallenge } from '../../src/payments/paywall/challenges.js';
import type { VerifiedPayment, X402Paywall } from '../../src/payments/paywall/x402-paywall.js';

/**
 * Small hand-written doubles for unit tests of the payment guard and the settlement
 * interceptor: what a route offers, a payment for it (syntactically valid, never signed:
 * verification is faked), the paywall's challenge and verdict, and an HTTP execution context.
 */
export const OFFERED: PaymentRequirements = {
  scheme: 'exact',
  network: 'eip155:84532',
  asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  amount: '2000',
  payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  maxTimeoutSeconds: 60,
  extra: { name: 'USDC', version: '2' },
};

export const PAYER = '0x4Bf9DBaf6ccd1784C8446f14A53455C8E00A3b0B';
export const PAID_URL = '/v1/ticker/BTC';

export interface PaymentOptions {
  readonly accepted?: PaymentRequirements;
  readonly value?: string;
  readonly nonce?: `0x${string}`;
  readonly signature?: string;
  readonly paymentId?: string;
  readonly extensions?: Record<string, unknown>;
}

/** A v2 `exact` payment for OFFERED with a fresh nonce, valid for the offered timeout. */
export function presentedPayment(options: PaymentOptions = {}): PaymentPayload {
  const accepted = options.accepted ?? OFFERED;
  const now = Math.floor(Date.now() / 1000);
  const extensions =
    options.extensions ??
    (options.paymentId === undefined
      ? undefined
      : { 'payment-identifier': { info: { required: false, id: options.paymentId } } });
  return {
    x402Version: 2,
    accepted,
    payload: {
      signature: options.signature ?? `0x${'1f'.repeat(65)}`,
      authorization: {
        from: PAYER,
        to: OFFERED.payTo,
        value: options.value ?? OFFERED.amount,
        validAfter: String(now - 600),
        validBefore: String(now + OFFERED.maxTimeoutSeconds),
        nonce: options.nonce ?? `0x${randomBytes(32).toString('hex')}`,
      },
    },
    ...(extensions === undefined ? {} : { extensions }),
  };
}

/** What the guard binds a payment-identifier to, computed independently of the guard. */
export function bindingOf(
  accepted: AcceptedPayment,
  fingerprint: string,
  url = PAID_URL,
): PaymentIdBinding {
  return {
    fingerprint,
    signatureDigest: createHash('sha256').update(accepted.signature.toLowerCase()).digest('hex'),
    resource: `GET ${url}`,
  };
}

/** Exact payments have nothing to cancel (batch-settlement vouchers do); one function, so equal. */
const nothingToCancel = (): Promise<void> => Promise.resolve();

export function verifiedPayment(payload: PaymentPayload): VerifiedPayment {
  return {
    kind: 'verified',
    payload,
    requirements: payload.accepted,
    declaredExtensions: undefined,
    context: {} as HTTPRequestContext,
    cancel: nothingToCancel,
  };
}

/** A 402 challenge as the paywall builds it, `error` naming the reason when there is one. */
export function challengeFor(error?: string): PaymentChallenge {
  const reason = error ?? 'Payment required';
  return {
    kind: 'challenge',
    headers: { 'PAYMENT-REQUIRED': Buffer.from(reason).toString('base64') },
    body: { x402Version: 1, error: reason, accepts: [] },
    requirements: [OFFERED],
    required: {
      x402Version: 2,
      error: reason,
      resource: { url: `http://localhost${PAID_URL}` },
      accepts: [OFFERED],
    },
  };
}

type Verdict = VerifiedPayment | PaymentChallenge;

/**
 * The paywall's per-request side: the route's requirements, its 402 (one cached object without
 * a reason, like the real one) and the facilitator's verdict, which a test replaces.
 */
export class FakePaywall {
  readonly unpaid = challengeFor();
  readonly challengeReasons: (string | undefined)[] = [];
  readonly verified: PaymentPayload[] = [];
  offered: readonly PaymentRequirements[] = [OFFERED];
  requirementsError: Error | undefined;
  verdict: (payload: PaymentPayload) => Promise<Verdict> = (payload) =>
    Promise.resolve(verifiedPayment(payload));

  requirementsFor(): Promise<readonly PaymentRequirements[]> {
    if (this.requirementsError !== undefined) return Promise.reject(this.requirementsError);
    return Promise.resolve(this.offered);
  }

  challenge(_request: unknown, error?: string): Promise<PaymentChallenge> {
    this.challengeReasons.push(error);
    return Promise.resolve(error === undefined ? this.unpaid : challengeFor(error));
  }

  verify(_request: unknown, payload: PaymentPayload): Promise<Verdict> {
    this.verified.push(payload);
    return this.verdict(payload);
  }

  asPaywall(): X402Paywall {
    return this as unknown as X402Paywall;
  }
}

/** A request as Fastify hands it to a guard: header names in lower case. */
export function paidRequest(
  headers: Record<string, string | string[]> = {},
  url = PAID_URL,
): RequestWithPayment {
  const lowerCase = Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]),
  );
  const path = url.split('?')[0] ?? '';
  return {
    method: 'GET',
    url,
    headers: lowerCase,
    routeOptions: { url: '/v1/ticker/:symbol' },
    // as Fastify's router gives it
    params: { symbol: decodeURIComponent(path.slice(path.lastIndexOf('/') + 1)) },
  } as unknown as RequestWithPayment;
}

/** A reply whose connection is open: the buyer is still there. */
export function openReply(): unknown {
  const raw = new EventEmitter();
  return {
    raw: Object.assign(raw, {
      destroyed: false,
      socket: { destroyed: false },
      writableFinished: false,
    }),
  };
}

export function httpContext(
  request: RequestWithPayment,
  reply: unknown = openReply(),
): ExecutionContext {
  return {
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }),
  } as unknown as ExecutionContext;
}

/** The error a promise rejects with; fails the test if it resolves. */
export async function rejectionOf(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, got a value');
}

/** A real metrics registry, for classes that record sales. */
export function detachedMetrics(): MetricsService {
  return new MetricsService();
}

/** A batch-settlement channel's configuration as the official client builds one (test addresses). */
export const CHANNEL_CONFIG: ChannelConfig = {
  payer: '0x4Bf9DBaf6ccd1784C8446f14A53455C8E00A3b0B',
  payerAuthorizer: '0x4Bf9DBaf6ccd1784C8446f14A53455C8E00A3b0B',
  receiver: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  receiverAuthorizer: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
  token: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  withdrawDelay: 900,
  salt: `0x${'00'.repeat(32)}`,
};

/**
 * A batch-settlement channel record (CHANNEL_CONFIG, one voucher of 2,000 charged, nothing
 * claimed), with `overrides`.
 */
export function channelRecord(overrides: Partial<Channel> = {}): Channel {
  return {
    channelId: `0x${'ab'.repeat(32)}`,
    channelConfig: CHANNEL_CONFIG,
    chargedCumulativeAmount: '2000',
    signedMaxClaimable: '2000',
    signature: `0x${'1b'.repeat(65)}`,
    balance: '100000',
    totalClaimed: '0',
    withdrawRequestedAt: 0,
    refundNonce: 0,
    lastRequestTimestamp: 1,
    ...overrides,
  };
}

/** The same chain (or none) for every network's payments, for a class reading SettlementChains. */
export function onEveryNetwork(chain: SettlementChain | null): SettlementChains {
  return { of: () => chain, any: chain !== null } as unknown as SettlementChains;
}
