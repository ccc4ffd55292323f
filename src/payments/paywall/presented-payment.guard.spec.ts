import { Logger } from '@nestjs/common';
import type { PaymentPayload } from '@x402/core/types';
import {
  FakePaywall,
  OFFERED,
  bindingOf,
  detachedMetrics,
  httpContext,
  paidRequest,
  presentedPayment,
  rejectionOf,
} from '../../../test/support/payment-doubles.js';
import { v1Header, v2Header } from '../../../test/support/x402-payloads.js';
import { ApiError, ErrorCode } from '../../common/api-error.js';
import { PreparedResponseException } from '../../common/prepared-response.exception.js';
import type { NetworkFacilitators } from '../facilitator/network-facilitators.js';
import { InMemoryPaymentLedger } from '../ledger/payment-ledger.js';
import type { PaymentConfig } from '../payments.settings.js';
import type { ExactSettlement } from '../schemes/exact/exact-settlement.js';
import { ExactScheme } from '../schemes/exact/exact.scheme.js';
import {
  acceptPayment,
  paymentExpiry,
  paymentFingerprint,
} from '../schemes/exact/payment-acceptance.js';
import type { SettlementReconciler } from '../schemes/exact/settlement-reconciler.js';
import { PaidCalls } from './paid-calls.js';
import { PaymentIdentifiers } from './payment-identifiers.js';
import { PaymentIntake } from './payment-intake.js';
import { PaymentVerification } from './payment-verification.js';
import { PresentedPaymentGuard, presentedPaymentOf } from './presented-payment.guard.js';
import type { SchemeRegistry } from './scheme-registry.js';

const ID = 'order-0000000000000002';

/** The real intake with the `exact` scheme over an in-memory ledger; the facilitator faked. */
function intakeOver(
  paywall: FakePaywall,
  ledger: InMemoryPaymentLedger,
  settlement = {} as ExactSettlement,
): PaymentIntake {
  const verification = new PaymentVerification(paywall.asPaywall(), detachedMetrics(), {
    verifyTimeoutMs: 60_000,
  } as PaymentConfig);
  const identifiers = new PaymentIdentifiers(ledger);
  const reconciler = { holdsUnrecorded: () => false } as unknown as SettlementReconciler;
  const exact = new ExactScheme(
    {} as NetworkFacilitators,
    ledger,
    verification,
    identifiers,
    reconciler,
    settlement,
  );
  const schemes = { named: (scheme: string) => (scheme === 'exact' ? exact : undefined) };
  return new PaymentIntake(
    paywall.asPaywall(),
    schemes as unknown as SchemeRegistry,
    verification,
    identifiers,
  );
}

/** Sells `payload` and stores its answer under its id, as a settled sale leaves them. */
async function soldUnderId(ledger: InMemoryPaymentLedger, payload: PaymentPayload) {
  const accepted = acceptPayment(payload, [OFFERED]);
  const fingerprint = paymentFingerprint(accepted);
  const expiresAt = paymentExpiry(accepted);
  await ledger.claimPaymentId(ID, bindingOf(accepted, fingerprint), expiresAt);
  await ledger.settle(fingerprint, expiresAt);
  const stored = {
    status: 200,
    headers: { 'PAYMENT-RESPONSE': 'receipt', 'cache-control': 'private, no-store' },
    body: { symbol: 'BTC', price: '97000.12' },
  };
  await ledger.storeResponse(ID, fingerprint, stored, expiresAt);
  return stored;
}

const base64 = (text: string): string => Buffer.from(text).toString('base64');

describe('PresentedPaymentGuard', () => {
  let paywall: FakePaywall;
  let ledger: InMemoryPaymentLedger;
  let guard: PresentedPaymentGuard;

  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  afterAll(() => {
    Logger.overrideLogger(true);
  });

  beforeEach(() => {
    paywall = new FakePaywall();
    ledger = new InMemoryPaymentLedger();
    guard = new PresentedPaymentGuard(intakeOver(paywall, ledger), new PaidCalls());
  });

  it.each([
    ['PAYMENT-SIGNATURE', 'not base64 at all!'],
    ['PAYMENT-SIGNATURE', base64('not json')],
    ['PAYMENT-SIGNATURE', base64('[1,2,3]')],
    ['PAYMENT-SIGNATURE', base64('{"x402Version":1}')],
    ['PAYMENT-SIGNATURE', base64('{"x402Version":2,"accepted":"x","payload":{}}')],
    ['PAYMENT-SIGNATURE', 'A'.repeat(12 * 1024 + 4)],
    ['X-PAYMENT', 'junk'],
    ['X-PAYMENT', base64('{"x402Version":2,"scheme":"exact","network":"base","payload":{}}')],
    ['X-PAYMENT', base64('{"x402Version":1,"scheme":"exact"}')],
    ['X-PAYMENT', ' '],
  ])(
    'refuses a %s header that cannot be decoded (%#) with 400 invalid_payment',
    async (name, value) => {
      const error = await rejectionOf(
        Promise.resolve().then(() =>
          guard.canActivate(httpContext(paidRequest({ [name]: value }))),
        ),
      );
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: ErrorCode.InvalidPayment });
      expect((error as ApiError).status).toBe(400);
    },
  );

  it('lets a request without a payment through: PaymentGuard challenges it', async () => {
    const request = paidRequest();
    await expect(guard.canActivate(httpContext(request))).resolves.toBe(true);
    expect(presentedPaymentOf(request)).toBeUndefined();
  });

  it('keeps a decodable v2 payment for PaymentGuard, decoded once, claiming nothing', async () => {
    const payment = presentedPayment();
    const request = paidRequest(v2Header(payment));
    await expect(guard.canActivate(httpContext(request))).resolves.toBe(true);
    expect(paywall.verified).toEqual([]);
    const kept = presentedPaymentOf(request);
    expect(kept).toEqual({ version: 2, payload: payment });
    // the header is not read again: the same decoded value is handed on
    request.headers['payment-signature'] = 'not base64 at all!';
    expect(presentedPaymentOf(request)).toBe(kept);
  });

  it('keeps a decodable v1 payment, to be paired with what the route offers', async () => {
    const payment = presentedPayment();
    const request = paidRequest(v1Header(payment));
    await expect(guard.canActivate(httpContext(request))).resolves.toBe(true);
    expect(presentedPaymentOf(request)).toEqual({
      version: 1,
      payment: { scheme: 'exact', network: 'base-sepolia', payload: payment.payload },
    });
  });

  describe('a payment-identifier retry of an answer already sold', () => {
    it('gets the stored answer here, before the route’s resolver, verifying nothing', async () => {
      const payload = presentedPayment({ paymentId: ID });
      const stored = await soldUnderId(ledger, payload);
      const error = await rejectionOf(
        guard.canActivate(httpContext(paidRequest(v2Header(payload)))),
      );
      expect(error).toBeInstanceOf(PreparedResponseException);
      const replay = error as PreparedResponseException;
      expect([replay.getStatus(), replay.headers, replay.body]).toEqual([
        200,
        stored.headers,
        stored.body,
      ]);
      expect(paywall.verified).toEqual([]);
    });

    it('a new id is not bound here: it is claimed after the resolver, by PaymentGuard', async () => {
      const payload = presentedPayment({ paymentId: ID });
      await expect(guard.canActivate(httpContext(paidRequest(v2Header(payload))))).resolves.toBe(
        true,
      );
      const accepted = acceptPayment(payload, [OFFERED]);
      const fingerprint = paymentFingerprint(accepted);
      expect(
        await ledger.claimPaymentId(ID, bindingOf(accepted, fingerprint), Date.now() + 60_000),
      ).toEqual({
        kind: 'claimed',
      });
      expect(await ledger.claim(fingerprint, Date.now() + 60_000)).toBe('claimed');
      expect(paywall.verified).toEqual([]);
    });

    it('another payment under a stored id goes on, to its 409 after the resolver', async () => {
      await soldUnderId(ledger, presentedPayment({ paymentId: ID }));
      const other = presentedPayment({ paymentId: ID });
      await expect(guard.canActivate(httpContext(paidRequest(v2Header(other))))).resolves.toBe(
        true,
      );
      expect(paywall.verified).toEqual([]);
    });

    it('a stored answer gone by the time the id is bound: the sale opened is abandoned at once', async () => {
      /** Says an answer is stored, as it was when read, though it has expired since. */
      class LapsedLedger extends InMemoryPaymentLedger {
        override hasStoredResponse(): Promise<boolean> {
          return Promise.resolve(true);
        }
      }
      const lapsed = new LapsedLedger();
      const givenBack: string[] = [];
      const settlement = {
        giveBack: (_sale: unknown, reason: string) => {
          givenBack.push(reason);
          return Promise.resolve();
        },
      } as unknown as ExactSettlement;
      const early = new PresentedPaymentGuard(
        intakeOver(paywall, lapsed, settlement),
        new PaidCalls(),
      );
      const payload = presentedPayment({ paymentId: ID });
      await expect(early.canActivate(httpContext(paidRequest(v2Header(payload))))).resolves.toBe(
        true,
      );
      expect(givenBack).toEqual(['handler_failed']);
    });
  });
});
