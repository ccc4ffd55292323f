import type { SettlementReconciler } from '../schemes/exact/settlement-reconciler.js';
import { uncertainSale } from '../../../test/support/eip3009-receipts.js';
import { Logger } from '@nestjs/common';
import { Socket } from 'node:net';
import type { PaymentPayload } from '@x402/core/types';
import {
  detachedMetrics,
  FakePaywall,
  OFFERED,
  bindingOf,
  challengeFor,
  httpContext,
  openReply,
  paidRequest,
  presentedPayment,
  rejectionOf,
  verifiedPayment,
} from '../../../test/support/payment-doubles.js';
import { v1Header, v2Header } from '../../../test/support/x402-payloads.js';
import { ApiError, ErrorCode } from '../../common/api-error.js';
import { PreparedResponseException } from '../../common/prepared-response.exception.js';
import { FacilitatorUnavailableError } from '../facilitator/facilitator-client.js';
import {
  acceptPayment,
  paymentExpiry,
  paymentFingerprint,
} from '../schemes/exact/payment-acceptance.js';
import { challengeResponse } from './payment-errors.js';
import { InMemoryPaymentLedger } from '../ledger/payment-ledger.js';
import { PaidCalls } from './paid-calls.js';
import { PaymentGuard } from './payment.guard.js';
import type { NetworkFacilitators } from '../facilitator/network-facilitators.js';
import type { ExactSettlement, PaymentInProgress } from '../schemes/exact/exact-settlement.js';
import { ExactScheme, type ExactSale } from '../schemes/exact/exact.scheme.js';
import { PaymentIdentifiers } from './payment-identifiers.js';
import { PaymentIntake } from './payment-intake.js';
import { PaymentVerification } from './payment-verification.js';
import type { SchemeRegistry } from './scheme-registry.js';
import type { RequestWithPayment } from './payment-errors.js';

/** The `exact` payment the guard left on the request for the interceptor, if any. */
function inProgressOf(request: RequestWithPayment): PaymentInProgress | undefined {
  return (request.x402Sale as ExactSale | undefined)?.inProgress;
}
import type { PaymentConfig } from '../payments.settings.js';

const ID = 'order-0000000000000001';

/** The ledger's view of a payment, computed by the test rather than read from the guard. */
function facts(payload: PaymentPayload, url?: string) {
  const accepted = acceptPayment(payload, [OFFERED]);
  const fingerprint = paymentFingerprint(accepted);
  const expiresAt = paymentExpiry(accepted);
  return { accepted, fingerprint, expiresAt, binding: bindingOf(accepted, fingerprint, url) };
}

function expectChallenge(error: unknown, reason: string): void {
  expect(error).toBeInstanceOf(PreparedResponseException);
  const prepared = error as PreparedResponseException;
  expect(prepared.getStatus()).toBe(402);
  expect((JSON.parse(prepared.body as string) as { error: string }).error).toBe(reason);
}

function expectApiError(error: unknown, code: ErrorCode, status: number): void {
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).code).toBe(code);
  expect((error as ApiError).status).toBe(status);
}

function base64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64');
}

describe('PaymentGuard', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  afterAll(() => {
    Logger.overrideLogger(true);
  });

  let paywall: FakePaywall;
  let ledger: InMemoryPaymentLedger;
  let guard: PaymentGuard;
  /** Fingerprints whose uncertain settlement the reconciler holds but could not record yet. */
  let unrecorded: Set<string>;
  let calls: PaidCalls;

  function guardWith(verifyTimeoutMs: number): PaymentGuard {
    const reconciler = {
      holdsUnrecorded: (fingerprint: string) => unrecorded.has(fingerprint),
    } as unknown as SettlementReconciler;
    const metrics = detachedMetrics();
    const verification = new PaymentVerification(paywall.asPaywall(), metrics, {
      verifyTimeoutMs,
    } as PaymentConfig);
    const identifiers = new PaymentIdentifiers(ledger);
    const exact = new ExactScheme(
      {} as NetworkFacilitators,
      ledger,
      verification,
      identifiers,
      reconciler,
      {} as ExactSettlement,
    );
    const schemes = { named: (scheme: string) => (scheme === 'exact' ? exact : undefined) };
    const intake = new PaymentIntake(
      paywall.asPaywall(),
      schemes as unknown as SchemeRegistry,
      verification,
      identifiers,
    );
    return new PaymentGuard(paywall.asPaywall(), intake, metrics, calls);
  }

  beforeEach(() => {
    unrecorded = new Set();
    calls = new PaidCalls();
    paywall = new FakePaywall();
    ledger = new InMemoryPaymentLedger();
    guard = guardWith(60_000);
  });

  /** Runs the guard on a request with these headers; the request shows what it left behind. */
  function present(headers: Record<string, string | string[]>, url?: string) {
    const request = paidRequest(headers, url);
    return { request, outcome: guard.canActivate(httpContext(request)) };
  }

  describe('without a payment', () => {
    it('answers the route’s cached 402 challenge, claiming and verifying nothing', async () => {
      const { request, outcome } = present({});
      const error = await rejectionOf(outcome);
      expect(error).toBe(challengeResponse(paywall.unpaid));
      expectChallenge(error, 'Payment required');
      expect(paywall.challengeReasons).toEqual([undefined]);
      expect(paywall.verified).toEqual([]);
      expect(inProgressOf(request)).toBeUndefined();
    });
  });

  describe('an in-process request standing for a paid call (an MCP tool call)', () => {
    const TOOL = 'mcp://tool/get_ticker';

    function call(cancelled = false) {
      const entered = calls.enter({
        route: 'mcp:get_ticker',
        resource: 'MCP get_ticker /v1/ticker/BTC',
        resourceUrl: TOOL,
      });
      if (cancelled) entered.cancel();
      return (headers: Record<string, string>, reply: unknown = openReply()) => {
        const request = paidRequest({ ...headers, ...entered.headers });
        Object.assign(request, { raw: { socket: null } });
        return { entered, request, outcome: guard.canActivate(httpContext(request, reply)) };
      };
    }

    it('refuses a call whose answer can no longer be delivered, before anything is verified', async () => {
      const { outcome } = call(true)(v2Header(presentedPayment()));
      expectApiError(await rejectionOf(outcome), ErrorCode.ClientClosedRequest, 499);
      expect(paywall.verified).toEqual([]);
    });

    it('is bound to its call, and its reply closes once the call is cancelled', async () => {
      let destroyed = 0;
      const reply = openReply() as { raw: { destroy: () => void } };
      reply.raw.destroy = () => (destroyed += 1);
      const payload = { ...presentedPayment(), resource: { url: TOOL } };
      const { request, outcome, entered } = call()(v2Header(payload), reply);
      await expect(outcome).resolves.toBe(true);
      expect(request.x402Call?.route).toBe('mcp:get_ticker');
      expect(destroyed).toBe(0);
      expect(entered.cancel()).toBe(true);
      expect(destroyed).toBe(1);
    });

    it('refuses a payment made for another resource with 402 resource_mismatch', async () => {
      const payload = {
        ...presentedPayment(),
        resource: { url: 'https://prices.example.com/v1/ticker/BTC' },
      };
      const { outcome } = call()(v2Header(payload));
      const error = await rejectionOf(outcome);
      expect(error).toBeInstanceOf(PreparedResponseException);
      expect(
        (JSON.parse((error as PreparedResponseException).body as string) as { error: string })
          .error,
      ).toMatch(/^resource_mismatch: .* not mcp:\/\/tool\/get_ticker/);
      expect(paywall.verified).toEqual([]);
    });

    it('leaves a request from a socket an HTTP request, even with a running call’s token', async () => {
      const entered = calls.enter({
        route: 'mcp:get_ticker',
        resource: 'MCP get_ticker /v1/ticker/BTC',
        resourceUrl: TOOL,
      });
      const payload = { ...presentedPayment(), resource: { url: TOOL } };
      const request = paidRequest({ ...v2Header(payload), ...entered.headers });
      Object.assign(request, { raw: { socket: new Socket() } });
      const error = await rejectionOf(guard.canActivate(httpContext(request)));
      expect(request.x402Call).toBeUndefined();
      expect(
        (JSON.parse((error as PreparedResponseException).body as string) as { error: string })
          .error,
      ).toMatch(/^resource_mismatch: this payment was made for an MCP tool/);
    });
  });

  describe('a payment it accepts', () => {
    it('is claimed, verified once as the rebuilt v2 payload, and handed to the interceptor', async () => {
      const payload = presentedPayment();
      const { accepted, fingerprint, expiresAt } = facts(payload);
      const { request, outcome } = present(v2Header(payload));

      await expect(outcome).resolves.toBe(true);
      expect(paywall.verified).toEqual([accepted.payload]);
      const { context, ...inProgress } = inProgressOf(request) ?? {};
      expect(inProgress).toEqual({
        accepted,
        payment: verifiedPayment(accepted.payload),
        version: 2,
        fingerprint,
        expiresAt,
        paymentId: undefined,
      });
      // what the scheme knows of the call: no request, no reply
      expect(Object.keys(context ?? {}).sort()).toEqual(['label', 'resource', 'route', 'signal']);
      expect(context).toMatchObject({
        route: '/v1/ticker/:symbol',
        resource: `GET ${request.url}`,
        label: `GET ${request.url}`,
      });
      expect(context?.signal.aborted).toBe(false);
      expect(await ledger.claim(fingerprint, expiresAt)).toBe('in_flight');
    });

    it('reaches verify with the same v2 payload and fingerprint from a v1 X-PAYMENT header', async () => {
      const payload = presentedPayment();
      const v2 = present(v2Header(payload));
      await expect(v2.outcome).resolves.toBe(true);

      ledger = new InMemoryPaymentLedger();
      guard = guardWith(60_000);
      const v1 = present(v1Header(payload, 'base-sepolia'));
      await expect(v1.outcome).resolves.toBe(true);

      const { accepted } = facts(payload);
      expect(paywall.verified).toEqual([accepted.payload, accepted.payload]);
      expect(inProgressOf(v1.request)?.version).toBe(1);
      expect(inProgressOf(v2.request)?.version).toBe(2);
      expect(inProgressOf(v1.request)?.fingerprint).toBe(inProgressOf(v2.request)?.fingerprint);
    });

    it('treats one payment under both headers as one payment: the v2 copy of a v1 payment in flight is refused', async () => {
      const payload = presentedPayment();
      await expect(present(v1Header(payload)).outcome).resolves.toBe(true);
      expectChallenge(
        await rejectionOf(present(v2Header(payload)).outcome),
        'payment_in_progress: this payment is already being used by another request',
      );
      expect(paywall.verified).toHaveLength(1);
    });

    it('reads PAYMENT-SIGNATURE before X-PAYMENT, and the first of a repeated header', async () => {
      const payload = presentedPayment();
      const [signature] = Object.values(v2Header(payload));
      const { request, outcome } = present({
        'PAYMENT-SIGNATURE': [signature!, 'not base64!'],
        'X-PAYMENT': 'not base64!',
      });
      await expect(outcome).resolves.toBe(true);
      expect(inProgressOf(request)?.version).toBe(2);
    });
  });

  describe('a malformed payment: 400 before anything is claimed or verified', () => {
    const payload = presentedPayment();
    it.each<[string, () => Record<string, string>, string]>([
      [
        'a PAYMENT-SIGNATURE that is not base64',
        () => ({ 'PAYMENT-SIGNATURE': '%%%' }),
        'Malformed payment: PAYMENT-SIGNATURE is not base64.',
      ],
      [
        'a PAYMENT-SIGNATURE that says x402Version 1',
        () => ({ 'PAYMENT-SIGNATURE': base64Json({ ...payload, x402Version: 1 }) }),
        'Malformed payment: PAYMENT-SIGNATURE must carry x402Version 2.',
      ],
      [
        'an X-PAYMENT for a network the route is not sold on',
        () => v1Header(payload, 'base'),
        'Malformed payment: this resource is not sold for scheme exact on base.',
      ],
      [
        'a payload with a key beside signature and authorization',
        () => v2Header({ ...payload, payload: { ...payload.payload, permit2Authorization: {} } }),
        'Malformed payment: unexpected field payload.permit2Authorization.',
      ],
      [
        'a payment-identifier shorter than 16 characters',
        () =>
          v2Header({ ...payload, extensions: presentedPayment({ paymentId: 'short' }).extensions }),
        'Malformed payment-identifier: ',
      ],
      [
        'a payment-identifier extension without `info.required`',
        () => v2Header({ ...payload, extensions: { 'payment-identifier': { info: { id: ID } } } }),
        'Malformed payment-identifier: ',
      ],
    ])('%s', async (_case, headers, detail) => {
      const { fingerprint, expiresAt } = facts(payload);
      const error = await rejectionOf(present(headers()).outcome);
      expectApiError(error, ErrorCode.InvalidPayment, 400);
      expect((error as ApiError).detail.slice(0, detail.length)).toBe(detail);
      expect(paywall.verified).toEqual([]);
      expect(await ledger.claim(fingerprint, expiresAt)).toBe('claimed');
    });
  });

  describe('a well-formed payment for something not sold: 402 with the reason, nothing claimed', () => {
    it.each<[string, PaymentPayload, string]>([
      [
        'an `accepted` that is not an offered requirement',
        presentedPayment({ accepted: { ...OFFERED, amount: '1000' }, value: '1000' }),
        'payment_not_offered: `accepted` is not one of the requirements this resource is sold for',
      ],
      [
        'an authorization for less than the price',
        presentedPayment({ value: '1999' }),
        'invalid_exact_evm_payload_authorization_value_mismatch: the price is 2000, the authorization is for 1999',
      ],
    ])('%s', async (_case, payload, reason) => {
      expectChallenge(await rejectionOf(present(v2Header(payload)).outcome), reason);
      expect(paywall.challengeReasons).toEqual([reason]);
      expect(paywall.verified).toEqual([]);
      // the fingerprint is network, token, payer and nonce: the same as an acceptable copy's
      const { fingerprint, expiresAt } = facts(presentedPayment({ nonce: nonceOf(payload) }));
      expect(await ledger.claim(fingerprint, expiresAt)).toBe('claimed');
    });
  });

  describe('when the route’s requirements cannot be read', () => {
    it('passes the paywall’s own 503 through untouched', async () => {
      const notConfirmed = new ApiError(ErrorCode.FacilitatorUnavailable, 'not confirmed yet');
      paywall.requirementsError = notConfirmed;
      const error = await rejectionOf(present(v2Header(presentedPayment())).outcome);
      expect(error).toBe(notConfirmed);
      expect(paywall.verified).toEqual([]);
    });

    it('answers 503 facilitator_unavailable for a facilitator it cannot reach', async () => {
      paywall.requirementsError = new FacilitatorUnavailableError('supported', new Error('down'));
      const error = await rejectionOf(present(v2Header(presentedPayment())).outcome);
      expectApiError(error, ErrorCode.FacilitatorUnavailable, 503);
      expect((error as ApiError).headers).toEqual({ 'retry-after': '5' });
    });
  });

  describe('the payment’s claim', () => {
    it('refuses a copy of a payment in flight with 402 payment_in_progress and leaves the first claim alone', async () => {
      const payload = presentedPayment();
      const { fingerprint, expiresAt } = facts(payload);
      await expect(present(v2Header(payload)).outcome).resolves.toBe(true);

      expectChallenge(
        await rejectionOf(present(v2Header(payload)).outcome),
        'payment_in_progress: this payment is already being used by another request',
      );
      expect(paywall.verified).toHaveLength(1);
      expect(await ledger.claim(fingerprint, expiresAt)).toBe('in_flight');
    });

    it('refuses a settled payment with 402 payment_already_used, never verifying it again', async () => {
      const payload = presentedPayment();
      const { fingerprint, expiresAt } = facts(payload);
      await ledger.settle(fingerprint, expiresAt);

      expectChallenge(
        await rejectionOf(present(v2Header(payload)).outcome),
        'payment_already_used: this payment has already been settled',
      );
      expect(paywall.verified).toEqual([]);
      expect(await ledger.claim(fingerprint, expiresAt)).toBe('settled');
    });

    it('answers a payment whose settlement is uncertain with 502 settlement_unknown, never a 402', async () => {
      const payload = presentedPayment();
      const { fingerprint, expiresAt } = facts(payload);
      await ledger.markUncertain(uncertainSale(fingerprint, expiresAt));

      const error = await rejectionOf(present(v2Header(payload)).outcome);
      expectApiError(error, ErrorCode.SettlementUnknown, 502);
      expect((error as ApiError).detail).toMatch(/^payment_outcome_unknown:/);
      expect(paywall.challengeReasons).toEqual([]);
      expect(paywall.verified).toEqual([]);
      expect(await ledger.claim(fingerprint, expiresAt)).toBe('uncertain');
    });

    it('gives back the payment-identifier it bound when the payment itself is refused', async () => {
      const payload = presentedPayment({ paymentId: ID });
      const { fingerprint, expiresAt, binding } = facts(payload);
      await ledger.settle(fingerprint, expiresAt);

      expectChallenge(
        await rejectionOf(present(v2Header(payload)).outcome),
        'payment_already_used: this payment has already been settled',
      );
      expect(await ledger.claimPaymentId(ID, binding, expiresAt)).toEqual({ kind: 'claimed' });
    });
  });

  describe('verification', () => {
    it('passes the facilitator’s refusal on as its 402 and gives the claim back', async () => {
      const refusal = challengeFor('invalid_exact_evm_signature');
      paywall.verdict = () => Promise.resolve(refusal);
      const payload = presentedPayment({ paymentId: ID });
      const { fingerprint, expiresAt, binding } = facts(payload);

      const error = await rejectionOf(present(v2Header(payload)).outcome);
      expect(error).toBe(challengeResponse(refusal));
      expectChallenge(error, 'invalid_exact_evm_signature');
      expect(await ledger.claimPaymentId(ID, binding, expiresAt)).toEqual({ kind: 'claimed' });
      expect(await ledger.claim(fingerprint, expiresAt)).toBe('claimed');
    });

    it('lets the same payment through once the facilitator accepts it after a refusal', async () => {
      paywall.verdict = () => Promise.resolve(challengeFor('invalid_exact_evm_signature'));
      const payload = presentedPayment({ paymentId: ID });
      await rejectionOf(present(v2Header(payload)).outcome);

      paywall.verdict = (verified) => Promise.resolve(verifiedPayment(verified));
      const { request, outcome } = present(v2Header(payload));
      await expect(outcome).resolves.toBe(true);
      expect(inProgressOf(request)?.paymentId).toBe(ID);
      expect(paywall.verified).toHaveLength(2);
    });

    it('answers 503 for an unreachable facilitator and gives the claim back', async () => {
      paywall.verdict = () =>
        Promise.reject(new FacilitatorUnavailableError('verify', new Error('ECONNREFUSED')));
      const payload = presentedPayment({ paymentId: ID });
      const { fingerprint, expiresAt, binding } = facts(payload);

      const error = await rejectionOf(present(v2Header(payload)).outcome);
      expectApiError(error, ErrorCode.FacilitatorUnavailable, 503);
      expect((error as ApiError).headers).toEqual({ 'retry-after': '5' });
      expect(await ledger.claim(fingerprint, expiresAt)).toBe('claimed');
      expect(await ledger.claimPaymentId(ID, binding, expiresAt)).toEqual({ kind: 'claimed' });
    });

    it('answers 503 when no verdict comes within X402_VERIFY_TIMEOUT_MS and gives the claim back', async () => {
      guard = guardWith(5);
      paywall.verdict = () => new Promise<never>(() => undefined);
      const payload = presentedPayment({ paymentId: ID });
      const { fingerprint, expiresAt, binding } = facts(payload);

      const error = await rejectionOf(present(v2Header(payload)).outcome);
      expectApiError(error, ErrorCode.FacilitatorUnavailable, 503);
      expect(await ledger.claim(fingerprint, expiresAt)).toBe('claimed');
      expect(await ledger.claimPaymentId(ID, binding, expiresAt)).toEqual({ kind: 'claimed' });
    });

    it('rethrows any other failure unchanged and gives the claim back', async () => {
      const failure = new Error('x402 server answered a payment error without PAYMENT-REQUIRED');
      paywall.verdict = () => Promise.reject(failure);
      const payload = presentedPayment();
      const { fingerprint, expiresAt } = facts(payload);

      expect(await rejectionOf(present(v2Header(payload)).outcome)).toBe(failure);
      expect(await ledger.claim(fingerprint, expiresAt)).toBe('claimed');
    });
  });

  describe('payment-identifier', () => {
    it('binds a new id to the payment and the resource, and hands it on', async () => {
      const payload = presentedPayment({ paymentId: ID });
      const { expiresAt, binding } = facts(payload);
      const { request, outcome } = present(v2Header(payload));

      await expect(outcome).resolves.toBe(true);
      expect(inProgressOf(request)?.paymentId).toBe(ID);
      expect(await ledger.claimPaymentId(ID, binding, expiresAt)).toEqual({ kind: 'in_flight' });
    });

    it('takes an extension without an id (a server-style declaration) as no id', async () => {
      const payload = presentedPayment({
        extensions: { 'payment-identifier': { info: { required: false } } },
      });
      const { request, outcome } = present(v2Header(payload));
      await expect(outcome).resolves.toBe(true);
      expect(inProgressOf(request)?.paymentId).toBeUndefined();
    });

    it('replays the response stored under the id, free, without verifying again', async () => {
      const payload = presentedPayment({ paymentId: ID });
      const { fingerprint, expiresAt } = facts(payload);
      await expect(present(v2Header(payload)).outcome).resolves.toBe(true);
      const stored = {
        status: 200,
        headers: { 'PAYMENT-RESPONSE': 'receipt', 'cache-control': 'private, no-store' },
        body: { symbol: 'BTC', price: '97000.12' },
      };
      await ledger.settle(fingerprint, expiresAt);
      await ledger.storeResponse(ID, fingerprint, stored, expiresAt);

      const error = await rejectionOf(present(v2Header(payload)).outcome);
      expect(error).toBeInstanceOf(PreparedResponseException);
      const replay = error as PreparedResponseException;
      expect([replay.getStatus(), replay.headers, replay.body]).toEqual([
        200,
        stored.headers,
        stored.body,
      ]);
      expect(paywall.verified).toHaveLength(1);
      expect(await ledger.claim(fingerprint, expiresAt)).toBe('settled');
    });

    it.each<[string, (payload: PaymentPayload) => { payload: PaymentPayload; url?: string }]>([
      ['another payment', () => ({ payload: presentedPayment({ paymentId: ID }) })],
      ['the same payment for another resource', (payload) => ({ payload, url: '/v1/ticker/ETH' })],
      [
        'the same authorization with another signature',
        (payload) => ({
          payload: presentedPayment({
            nonce: nonceOf(payload),
            signature: `0x${'2e'.repeat(65)}`,
            paymentId: ID,
          }),
        }),
      ],
    ])(
      'answers 409 for an id already bound to %s, leaving the binding alone',
      async (_c, other) => {
        const payload = presentedPayment({ paymentId: ID });
        const { expiresAt, binding } = facts(payload);
        await expect(present(v2Header(payload)).outcome).resolves.toBe(true);

        const conflicting = other(payload);
        const error = await rejectionOf(
          present(v2Header(conflicting.payload), conflicting.url).outcome,
        );
        expectApiError(error, ErrorCode.PaymentIdConflict, 409);
        expect((error as ApiError).detail).toContain(ID);
        expect(paywall.verified).toHaveLength(1);
        expect(await ledger.claimPaymentId(ID, binding, expiresAt)).toEqual({ kind: 'in_flight' });
      },
    );

    it('takes the same signature in other letter case as the same payment: 402 in progress, not 409', async () => {
      const payload = presentedPayment({ paymentId: ID, signature: `0x${'ab'.repeat(65)}` });
      await expect(present(v2Header(payload)).outcome).resolves.toBe(true);
      const upperCase = presentedPayment({
        paymentId: ID,
        nonce: nonceOf(payload),
        signature: `0x${'AB'.repeat(65)}`,
      });
      expectChallenge(
        await rejectionOf(present(v2Header(upperCase)).outcome),
        'payment_in_progress: this payment-identifier is being used by another request',
      );
    });

    it('refuses an id whose request is in flight with 402 and leaves its binding alone', async () => {
      const payload = presentedPayment({ paymentId: ID });
      const { fingerprint, expiresAt, binding } = facts(payload);
      await expect(present(v2Header(payload)).outcome).resolves.toBe(true);

      expectChallenge(
        await rejectionOf(present(v2Header(payload)).outcome),
        'payment_in_progress: this payment-identifier is being used by another request',
      );
      expect(paywall.verified).toHaveLength(1);
      expect(await ledger.claimPaymentId(ID, binding, expiresAt)).toEqual({ kind: 'in_flight' });
      expect(await ledger.claim(fingerprint, expiresAt)).toBe('in_flight');
    });

    it('answers 502, never the in-flight 402, while its uncertain settlement is not yet in the ledger', async () => {
      const payload = presentedPayment({ paymentId: ID });
      const { fingerprint } = facts(payload);
      await expect(present(v2Header(payload)).outcome).resolves.toBe(true);
      // the settlement's outcome was unknown and the ledger could not record it
      unrecorded.add(fingerprint);

      const error = await rejectionOf(present(v2Header(payload)).outcome);
      expectApiError(error, ErrorCode.SettlementUnknown, 502);
      expect(paywall.challengeReasons).toEqual([]);
    });

    it('answers an id whose settlement is uncertain with 502 settlement_unknown, never a 402', async () => {
      const payload = presentedPayment({ paymentId: ID });
      const { fingerprint, expiresAt, binding } = facts(payload);
      await expect(present(v2Header(payload)).outcome).resolves.toBe(true);
      await ledger.markUncertain(uncertainSale(fingerprint, expiresAt, { paymentId: ID }));

      const error = await rejectionOf(present(v2Header(payload)).outcome);
      expectApiError(error, ErrorCode.SettlementUnknown, 502);
      expect(paywall.challengeReasons).toEqual([]);
      expect(await ledger.claimPaymentId(ID, binding, expiresAt)).toEqual({ kind: 'uncertain' });
    });
  });
});

function nonceOf(payload: PaymentPayload): `0x${string}` {
  return (payload.payload as { authorization: { nonce: `0x${string}` } }).authorization.nonce;
}
