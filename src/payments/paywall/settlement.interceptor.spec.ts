import { EventEmitter } from 'node:events';
import { Logger, type CallHandler } from '@nestjs/common';
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { SettleResponse } from '@x402/core/types';
import { InMemoryChannelStorage, type Channel } from '@x402/evm/batch-settlement/server';
import { lastValueFrom, of, throwError, type Observable } from 'rxjs';
import {
  detachedMetrics,
  FakePaywall,
  OFFERED,
  PAYER,
  bindingOf,
  httpContext,
  paidRequest,
  presentedPayment,
  rejectionOf,
  verifiedPayment,
  onEveryNetwork,
} from '../../../test/support/payment-doubles.js';
import { ApiError, ErrorCode } from '../../common/api-error.js';
import { PreparedResponseException } from '../../common/prepared-response.exception.js';
import type { AcceptedBatchPayment } from '../schemes/batch-settlement/batch-acceptance.js';
import {
  FacilitatorUnavailableError,
  settlementTraces,
} from '../facilitator/facilitator-client.js';
import {
  acceptPayment,
  paymentExpiry,
  paymentFingerprint,
} from '../schemes/exact/payment-acceptance.js';
import type { BatchChannels } from '../schemes/batch-settlement/batch-channels.js';
import {
  BatchSettlement,
  type BatchPaymentInProgress,
} from '../schemes/batch-settlement/batch-settlement.js';
import { batchSale } from '../schemes/batch-settlement/batch-settlement.scheme.js';
import { PaidCallStamps } from '../schemes/batch-settlement/paid-calls.js';
import { ExactSettlement, type PaymentInProgress } from '../schemes/exact/exact-settlement.js';
import { exactSale, type ExactSale } from '../schemes/exact/exact.scheme.js';
import { PaymentIdentifiers } from './payment-identifiers.js';
import { PaymentVerification } from './payment-verification.js';
import {
  InMemoryPaymentLedger,
  type PaymentIdBinding,
  type PaymentLedger,
  type StoredResponse,
} from '../ledger/payment-ledger.js';
import type { UncertainSale } from '../schemes/exact/uncertain-sale.js';
import type { PaymentSettler, SettlementOutcome } from '../schemes/exact/payment-settler.js';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { SettlementTrace } from '../facilitator/facilitator-client.js';
import { LocalReconcileClaims } from '../schemes/exact/reconcile-claims.js';
import { SettlementReconciler } from '../schemes/exact/settlement-reconciler.js';
import { SoldAnswers } from '../schemes/exact/sold-answers.js';
import type { PaymentConfig } from '../payments.settings.js';
import { SettlementInterceptor } from './settlement.interceptor.js';
import { PaymentIntake } from './payment-intake.js';
import { saleContextOf } from './sale-context.js';
import type { SchemeRegistry } from './scheme-registry.js';
import type { RequestWithPayment } from './payment-errors.js';
import type { SaleContext } from './seller-scheme.js';
import type { FastifyReply } from 'fastify';
import type { ProtocolVersion } from './x402-wire.js';

const ID = 'order-0000000000000001';
const TX = `0x${'11'.repeat(32)}` as const;
const BODY = { symbol: 'BTC', price: '97000.12' };

/** Answers every settlement with the outcome the test sets, and records what it was asked. */
class ScriptedSettler {
  outcome: SettlementOutcome = { kind: 'settled', settlement: settlement(true) };
  readonly calls: Parameters<PaymentSettler['settle']>[] = [];

  /** Runs while the settlement is under way (a client leaving, say). */
  onSettle: (() => void) | undefined;

  settle(...args: Parameters<PaymentSettler['settle']>): Promise<SettlementOutcome> {
    this.calls.push(args);
    this.onSettle?.();
    return Promise.resolve(this.outcome);
  }
}

/** Records what it is asked to hold; the ledger marks are the real reconciler's (no chain to watch). */
class RecordingReconciler {
  readonly tracked: { sale: UncertainSale; trace: SettlementTrace | undefined }[] = [];

  constructor(
    private readonly ledgerOf: () => PaymentLedger,
    private readonly soldOf: () => SoldAnswers,
  ) {}

  async hold(sale: UncertainSale, trace?: SettlementTrace): Promise<void> {
    this.tracked.push({ sale, trace });
    const reconciler = new SettlementReconciler(
      onEveryNetwork(null),
      this.ledgerOf(),
      new LocalReconcileClaims(),
      this.soldOf(),
      new SchedulerRegistry(),
    );
    await reconciler.hold(sale, trace);
  }
}

/** The connection an answer would go out on. */
class FakeConnection extends EventEmitter {
  writableFinished = false;

  constructor(
    public destroyed = false,
    public socket: { destroyed: boolean } | null = { destroyed: false },
  ) {
    super();
  }
}

/** The reply the answer would go out on: its connection state and the headers set on it. */
class FakeReply {
  sent: Record<string, string> | undefined;
  raw = new FakeConnection();

  headers(values: Record<string, string>): this {
    this.sent = { ...this.sent, ...values };
    return this;
  }
}

/** A ledger that can claim but not record what happened next (a shared store that went away). */
class LedgerThatCannotRecord extends InMemoryPaymentLedger {
  override settle(): Promise<void> {
    return Promise.reject(new Error('store unavailable'));
  }

  override markUncertain(): Promise<'recorded'> {
    return Promise.reject(new Error('store unavailable'));
  }

  override storeResponse(): Promise<void> {
    return Promise.reject(new Error('store unavailable'));
  }
}

/** A ledger whose store for retries is broken: the money has moved, the 200 must still go out. */
class LedgerThatCannotStore extends InMemoryPaymentLedger {
  override storeResponse(): Promise<void> {
    return Promise.reject(new Error('store unavailable'));
  }
}

function settlement(success: boolean, errorReason?: string): SettleResponse {
  return {
    success,
    transaction: success ? TX : '',
    network: OFFERED.network,
    payer: PAYER,
    ...(errorReason === undefined ? {} : { errorReason }),
  };
}

function decodeV1Receipt(value: string): unknown {
  return JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
}

describe('SettlementInterceptor', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  afterAll(() => {
    Logger.overrideLogger(true);
  });

  let paywall: FakePaywall;
  let settler: ScriptedSettler;
  let reconciler: RecordingReconciler;
  let ledger: InMemoryPaymentLedger;
  /** What a batch take-back resolves with (BatchChannels' resolves once it is done). */
  let takingBack: Promise<void> = Promise.resolve();
  let sold: SoldAnswers;
  let reply: FakeReply;
  let handled: number;

  /** The paid request the handler answers; its sale context is the one the guard built. */
  let request: RequestWithPayment;

  function interceptor(): SettlementInterceptor {
    const config = { verifyTimeoutMs: 10_000 } as PaymentConfig;
    const verification = new PaymentVerification(paywall.asPaywall(), detachedMetrics(), config);
    const schemes = {} as SchemeRegistry;
    return new SettlementInterceptor(
      new PaymentIntake(paywall.asPaywall(), schemes, verification, identifiers()),
    );
  }

  function identifiers(): PaymentIdentifiers {
    return new PaymentIdentifiers(ledger);
  }

  /** What the guard tells the scheme of the call, built from the request and its reply. */
  function saleContext(): SaleContext {
    return saleContextOf(request, reply as unknown as FastifyReply);
  }

  /** The `exact` sale the guard would have opened for this payment. */
  function saleOf(payment: PaymentInProgress): ExactSale {
    const settlement = new ExactSettlement(
      settler as unknown as PaymentSettler,
      reconciler as unknown as SettlementReconciler,
      sold,
      identifiers(),
      ledger,
      detachedMetrics(),
    );
    return exactSale(payment, settlement);
  }

  beforeEach(() => {
    paywall = new FakePaywall();
    settler = new ScriptedSettler();
    reconciler = new RecordingReconciler(
      () => ledger,
      () => sold,
    );
    ledger = new InMemoryPaymentLedger();
    takingBack = Promise.resolve();
    sold = new SoldAnswers(detachedMetrics(), identifiers());
    reply = new FakeReply();
    request = paidRequest();
    handled = 0;
  });

  /**
   * A payment as the guard leaves it: claimed in the ledger (and its id bound), verified, on
   * the request.
   */
  async function claimedPayment(
    options: { paymentId?: string; version?: ProtocolVersion } = {},
  ): Promise<PaymentInProgress & { binding: PaymentIdBinding }> {
    const accepted = acceptPayment(presentedPayment({ paymentId: options.paymentId }), [OFFERED]);
    const fingerprint = paymentFingerprint(accepted);
    const expiresAt = paymentExpiry(accepted);
    const binding = bindingOf(accepted, fingerprint);
    expect(await ledger.claim(fingerprint, expiresAt)).toBe('claimed');
    if (options.paymentId !== undefined) {
      expect(await ledger.claimPaymentId(options.paymentId, binding, expiresAt)).toEqual({
        kind: 'claimed',
      });
    }
    return {
      accepted,
      payment: verifiedPayment(accepted.payload),
      version: options.version ?? 2,
      fingerprint,
      expiresAt,
      paymentId: options.paymentId,
      binding,
      context: saleContext(),
    };
  }

  function handler(answer: () => Observable<unknown>): CallHandler {
    return {
      handle: () => {
        handled += 1;
        return answer();
      },
    };
  }

  /** Runs the interceptor around a handler answering BODY (or `answer`) for a paid request. */
  function run(
    payment: PaymentInProgress | undefined,
    answer: () => Observable<unknown> = () => of(BODY),
  ): Promise<unknown> {
    request.x402Sale = payment === undefined ? undefined : saleOf(payment);
    const context = httpContext(request, reply);
    return lastValueFrom(interceptor().intercept(context, handler(answer)));
  }

  /** Both the payment and its id are free again: the same payment can be presented later. */
  async function expectReleased(payment: PaymentInProgress & { binding: PaymentIdBinding }) {
    expect(await ledger.claim(payment.fingerprint, payment.expiresAt)).toBe('claimed');
    if (payment.paymentId !== undefined) {
      expect(
        await ledger.claimPaymentId(payment.paymentId, payment.binding, payment.expiresAt),
      ).toEqual({ kind: 'claimed' });
    }
  }

  it('fails closed: a request without a verified payment never reaches the handler', () => {
    const request = paidRequest();
    const context = httpContext(request, reply);
    expect(() =>
      interceptor().intercept(
        context,
        handler(() => of(BODY)),
      ),
    ).toThrow(new Error('GET /v1/ticker/BTC: paid route reached without a verified payment'));
    expect(handled).toBe(0);
    expect(settler.calls).toEqual([]);
    expect(reply.sent).toBeUndefined();
  });

  it('settles nothing when the handler fails, passes its error on and releases the payment and id', async () => {
    const payment = await claimedPayment({ paymentId: ID });
    const failure = new ApiError(ErrorCode.PriceUnavailable, 'no quorum');

    expect(await rejectionOf(run(payment, () => throwError(() => failure)))).toBe(failure);
    expect(settler.calls).toEqual([]);
    expect(reply.sent).toBeUndefined();
    await expectReleased(payment);
  });

  it.each<[string, FakeReply['raw']]>([
    ['the response is destroyed', new FakeConnection(true, { destroyed: false })],
    ['the socket is detached', new FakeConnection(false, null)],
    ['the socket is destroyed', new FakeConnection(false, { destroyed: true })],
  ])(
    'settles nothing when the client left (%s): 499 and the payment released',
    async (_case, raw) => {
      reply.raw = raw;
      const payment = await claimedPayment({ paymentId: ID });

      const error = await rejectionOf(run(payment));
      expect(error).toBeInstanceOf(ApiError);
      expect([(error as ApiError).code, (error as ApiError).status]).toEqual([
        ErrorCode.ClientClosedRequest,
        499,
      ]);
      expect(handled).toBe(1);
      expect(settler.calls).toEqual([]);
      expect(reply.sent).toBeUndefined();
      await expectReleased(payment);
    },
  );

  describe('settled', () => {
    it('sends the body with the v2 receipt and marks the payment settled', async () => {
      const payment = await claimedPayment();

      expect(await run(payment)).toBe(BODY);
      expect(settler.calls.map(([verified, accepted]) => [verified, accepted])).toEqual([
        [payment.payment, payment.accepted],
      ]);
      expect(Object.keys(reply.sent ?? {})).toEqual(['PAYMENT-RESPONSE', 'cache-control']);
      expect(reply.sent?.['cache-control']).toBe('private, no-store');
      expect(decodePaymentResponseHeader(reply.sent!['PAYMENT-RESPONSE']!)).toEqual(
        settlement(true),
      );
      expect(await ledger.claim(payment.fingerprint, payment.expiresAt)).toBe('settled');
      expect(reconciler.tracked).toEqual([]);
    });

    it('answers a v1 payment with X-PAYMENT-RESPONSE and stores the response under its id', async () => {
      const payment = await claimedPayment({ paymentId: ID, version: 1 });

      expect(await run(payment)).toBe(BODY);
      expect(Object.keys(reply.sent ?? {})).toEqual(['X-PAYMENT-RESPONSE', 'cache-control']);
      expect(decodeV1Receipt(reply.sent!['X-PAYMENT-RESPONSE']!)).toEqual({
        success: true,
        transaction: TX,
        network: 'base-sepolia',
        payer: PAYER,
      });
      expect(await ledger.claim(payment.fingerprint, payment.expiresAt)).toBe('settled');
      const stored: StoredResponse = { status: 200, headers: reply.sent!, body: BODY };
      expect(await ledger.claimPaymentId(ID, payment.binding, payment.expiresAt)).toEqual({
        kind: 'stored',
        response: stored,
      });
    });

    it('still sends the 200 when the response cannot be stored for retries', async () => {
      ledger = new LedgerThatCannotStore();
      const payment = await claimedPayment({ paymentId: ID });

      expect(await run(payment)).toBe(BODY);
      expect(Object.keys(reply.sent ?? {})).toEqual(['PAYMENT-RESPONSE', 'cache-control']);
      expect(await ledger.claim(payment.fingerprint, payment.expiresAt)).toBe('settled');
    });
  });

  it('still sends the 200 when the ledger cannot record the settlement: the price has moved', async () => {
    ledger = new LedgerThatCannotRecord();
    const payment = await claimedPayment({ paymentId: ID });

    expect(await run(payment)).toBe(BODY);
    expect(Object.keys(reply.sent ?? {})).toEqual(['PAYMENT-RESPONSE', 'cache-control']);
    // not released: the payment cannot be presented again while its claim lives
    expect(await ledger.claim(payment.fingerprint, payment.expiresAt)).toBe('in_flight');
  });

  it('still answers 502 settlement_unknown when the ledger cannot record the unknown outcome', async () => {
    ledger = new LedgerThatCannotRecord();
    settler.outcome = {
      kind: 'unknown',
      reason: 'settlement_deadline: not confirmed within 15000 ms',
      trace: { observed: true, broadcast: true, transaction: TX },
      transaction: TX,
    };
    const payment = await claimedPayment({ paymentId: ID });

    const error = await rejectionOf(run(payment));
    expect(error).toBeInstanceOf(ApiError);
    expect([(error as ApiError).code, (error as ApiError).status]).toEqual([
      ErrorCode.SettlementUnknown,
      502,
    ]);
    expect(reply.sent).toBeUndefined();
    expect(await ledger.claim(payment.fingerprint, payment.expiresAt)).toBe('in_flight');
  });

  it('withholds the body when settlement is refused: 402 with the reason and receipt, payment released', async () => {
    const refused = settlement(false, 'invalid_exact_evm_insufficient_balance');
    settler.outcome = { kind: 'refused', settlement: refused, reason: refused.errorReason! };
    const payment = await claimedPayment({ paymentId: ID });

    const error = await rejectionOf(run(payment));
    expect(error).toBeInstanceOf(PreparedResponseException);
    const prepared = error as PreparedResponseException;
    expect(prepared.getStatus()).toBe(402);
    const reason = 'settlement_failed: invalid_exact_evm_insufficient_balance';
    expect((JSON.parse(prepared.body as string) as { error: string }).error).toBe(reason);
    expect(paywall.challengeReasons).toEqual([reason]);
    expect(prepared.headers['PAYMENT-REQUIRED']).toBe(Buffer.from(reason).toString('base64'));
    expect(decodePaymentResponseHeader(prepared.headers['PAYMENT-RESPONSE']!)).toEqual(refused);
    expect(reply.sent).toBeUndefined();
    await expectReleased(payment);
  });

  it("tells the settlement when the client's connection closes before the answer went out", async () => {
    const seen: boolean[] = [];
    settler.onSettle = () => {
      const departed = settler.calls[0]?.[2];
      seen.push(departed?.aborted ?? true);
      reply.raw.emit('close');
      seen.push(departed?.aborted ?? false);
    };
    await run(await claimedPayment({ paymentId: ID }));
    expect(seen).toEqual([false, true]);
  });

  it.each<[string, SettlementOutcome, ErrorCode, number]>([
    [
      'answers 499 when the client left before the payment was sent',
      { kind: 'abandoned' },
      ErrorCode.ClientClosedRequest,
      499,
    ],
    [
      'answers 503 when the facilitator could not be asked',
      {
        kind: 'unavailable',
        error: new FacilitatorUnavailableError('settle', new Error('ECONNREFUSED')),
      },
      ErrorCode.FacilitatorUnavailable,
      503,
    ],
  ])('%s, and releases the payment', async (_case, outcome, code, status) => {
    settler.outcome = outcome;
    const payment = await claimedPayment({ paymentId: ID });

    const error = await rejectionOf(run(payment));
    expect(error).toBeInstanceOf(ApiError);
    expect([(error as ApiError).code, (error as ApiError).status]).toEqual([code, status]);
    expect(reply.sent).toBeUndefined();
    await expectReleased(payment);
  });

  describe('outcome unknown', () => {
    const trace = { observed: true, broadcast: true, transaction: TX };

    it('answers 502 naming the transaction, holds the payment and id uncertain, and has the chain watched', async () => {
      settler.outcome = { kind: 'unknown', reason: 'settlement_deadline', trace, transaction: TX };
      const payment = await claimedPayment({ paymentId: ID });

      const error = await rejectionOf(run(payment));
      expect(error).toBeInstanceOf(ApiError);
      const apiError = error as ApiError;
      expect([apiError.code, apiError.status]).toEqual([ErrorCode.SettlementUnknown, 502]);
      expect(apiError.detail).toContain(`(transaction ${TX}): settlement_deadline.`);
      expect(apiError.headers).toEqual({ 'retry-after': '5' });
      expect(reply.sent).toBeUndefined();
      expect(await ledger.claim(payment.fingerprint, payment.expiresAt)).toBe('uncertain');
      expect(await ledger.claimPaymentId(ID, payment.binding, payment.expiresAt)).toEqual({
        kind: 'uncertain',
      });
      expect(reconciler.tracked).toEqual([
        {
          sale: {
            payment: payment.accepted,
            fingerprint: payment.fingerprint,
            expiresAt: payment.expiresAt,
            paymentId: ID,
            route: '/v1/ticker/:symbol',
            version: 2,
            transaction: TX,
            body: BODY,
          },
          trace,
        },
      ]);
      // what another instance reads to reconcile it
      expect(await ledger.uncertainSales()).toEqual([reconciler.tracked[0]!.sale]);
    });

    it('stores the 200 under the id once the chain shows the payment settled', async () => {
      settler.outcome = { kind: 'unknown', reason: 'settlement_deadline', trace, transaction: TX };
      const payment = await claimedPayment({ paymentId: ID });
      await rejectionOf(run(payment));

      await sold.reconciled(reconciler.tracked[0]!.sale, TX);
      const claim = await ledger.claimPaymentId(ID, payment.binding, payment.expiresAt);
      expect(claim.kind).toBe('stored');
      const { response } = claim as Extract<typeof claim, { kind: 'stored' }>;
      expect([response.status, response.body]).toEqual([200, BODY]);
      expect(response.headers['cache-control']).toBe('private, no-store');
      expect(decodePaymentResponseHeader(response.headers['PAYMENT-RESPONSE']!)).toEqual(
        settlement(true),
      );
    });

    it('without an id or a transaction: 502 naming none, payment uncertain, nothing to store', async () => {
      const untraced = { observed: false, broadcast: false };
      settler.outcome = {
        kind: 'unknown',
        reason: 'settlement_error: socket hang up',
        trace: untraced,
        transaction: undefined,
      };
      const payment = await claimedPayment();

      const error = await rejectionOf(run(payment));
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).code).toBe(ErrorCode.SettlementUnknown);
      expect((error as ApiError).detail).toMatch(
        /^The settlement could not be confirmed: settlement_error: socket hang up\./,
      );
      expect(await ledger.claim(payment.fingerprint, payment.expiresAt)).toBe('uncertain');
      expect(reconciler.tracked).toHaveLength(1);
      expect(reconciler.tracked[0]?.sale.paymentId).toBeUndefined();
      expect(reconciler.tracked[0]?.sale.transaction).toBeUndefined();
      await expect(sold.reconciled(reconciler.tracked[0]!.sale, TX)).resolves.toBeUndefined();
      expect(await ledger.claim(payment.fingerprint, payment.expiresAt)).toBe('uncertain');
    });
  });

  describe('batch settlement', () => {
    const CHANNEL = `0x${'cc'.repeat(32)}` as const;
    const SIGNATURE = `0x${'5a'.repeat(65)}` as const;
    let storage: InMemoryChannelStorage;
    /** What the paywall's settleWithState answers; it runs inside the settlement's trace, if any. */
    let settleBatch: () => Promise<SettleResponse>;
    /** Channels whose possibly recorded charge the paywall was asked to take back. */
    const takenBack: string[] = [];

    beforeEach(() => {
      storage = new InMemoryChannelStorage();
      settleBatch = () => Promise.resolve(batchSettled('4000'));
      takenBack.length = 0;
      Object.assign(paywall, { settleWithState: () => settleBatch() });
    });

    /** The SDK's answer: the channel's charged total after this settlement, when it recorded one. */
    function batchSettled(charged: string | undefined): SettleResponse {
      return {
        ...settlement(true),
        ...(charged === undefined
          ? {}
          : { extra: { channelState: { chargedCumulativeAmount: charged } } }),
      };
    }

    function batchPayment(kind: 'deposit' | 'voucher'): BatchPaymentInProgress {
      const accepted = acceptPayment(presentedPayment(), [OFFERED]);
      const batch = {
        payload: accepted.payload,
        requirement: OFFERED,
        kind,
        channelId: CHANNEL,
        payer: PAYER,
        maxClaimableAmount: '4000',
        signature: SIGNATURE,
      } as AcceptedBatchPayment;
      return {
        accepted: batch,
        payment: verifiedPayment(accepted.payload),
        fingerprint: `${CHANNEL}:4000`,
        paymentId: undefined,
        version: 2,
        context: saleContext(),
      };
    }

    function runBatch(payment: BatchPaymentInProgress): Promise<unknown> {
      const channels = {
        channels: () => storage,
        paidCalls: new PaidCallStamps(),
        reservationOf: () => undefined,
        claimIfOverThreshold: () => undefined,
        takeBackUncertainCharge: (_payment: unknown, accepted: AcceptedBatchPayment) => {
          takenBack.push(accepted.channelId);
          return takingBack;
        },
      } as unknown as BatchChannels;
      const settlement = new BatchSettlement(
        paywall.asPaywall(),
        channels,
        identifiers(),
        detachedMetrics(),
        { settleTimeoutMs: 15_000 } as PaymentConfig,
      );
      request.x402Sale = batchSale(payment, settlement);
      return lastValueFrom(
        interceptor().intercept(
          httpContext(request, reply),
          handler(() => of(BODY)),
        ),
      );
    }

    /** The call fails with this problem, and nothing of the body or receipt went out. */
    async function expectProblem(
      work: Promise<unknown>,
      code: ErrorCode,
      status: number,
    ): Promise<void> {
      const error = await rejectionOf(work);
      expect(error).toBeInstanceOf(ApiError);
      expect([(error as ApiError).code, (error as ApiError).status]).toEqual([code, status]);
      expect(reply.sent).toBeUndefined();
    }

    const expectUnknown = (work: Promise<unknown>) =>
      expectProblem(work, ErrorCode.SettlementUnknown, 502);

    it('sends the body with the receipt once the voucher is what the channel is charged for', async () => {
      await expect(runBatch(batchPayment('voucher'))).resolves.toEqual(BODY);
      expect(reply.sent?.['PAYMENT-RESPONSE']).toBeDefined();
    });

    it('answers 502, body withheld, a deposit the SDK reports settled without its charge recorded', async () => {
      // the deposit outlived its channel reservation and a voucher for the same amount, with
      // the same signature, was sold on its base meanwhile: the record shows that one charged
      settleBatch = () => Promise.resolve(batchSettled(undefined));
      await storage.updateChannel(CHANNEL, () => ({
        ...({} as Channel),
        channelId: CHANNEL,
        chargedCumulativeAmount: '4000',
        signature: SIGNATURE,
      }));

      await expectUnknown(runBatch(batchPayment('deposit')));
    });

    it('answers 503, nothing charged, when the channel state could not be recorded', async () => {
      settleBatch = () =>
        Promise.resolve(
          settlement(false, 'invalid_batch_settlement_evm_verification_state_unavailable'),
        );

      await expectProblem(runBatch(batchPayment('voucher')), ErrorCode.SharedStateUnavailable, 503);
    });

    it('answers 502 and has the charge taken back when the store may have recorded the voucher', async () => {
      settleBatch = () => Promise.resolve(settlement(false, 'channel_state_uncertain'));

      await expectUnknown(runBatch(batchPayment('voucher')));
      expect(takenBack).toEqual([CHANNEL]);
    });

    it('keeps the payment-identifier taken until the charge is taken back: a retry meanwhile is no new sale', async () => {
      settleBatch = () => Promise.resolve(settlement(false, 'channel_state_uncertain'));
      let tookBack = (): void => undefined;
      takingBack = new Promise((resolve) => (tookBack = resolve));
      const paymentId = 'pay_batch_taken_0001';
      const binding = { fingerprint: `${CHANNEL}:4000`, signatureDigest: 'd', resource: 'r' };
      const later = Date.now() + 60_000;
      expect(await ledger.claimPaymentId(paymentId, binding, later)).toEqual({ kind: 'claimed' });

      await expectUnknown(runBatch({ ...batchPayment('voucher'), paymentId }));
      expect(await ledger.claimPaymentId(paymentId, binding, later)).toEqual({ kind: 'in_flight' });

      tookBack();
      await new Promise((resolve) => setImmediate(resolve));
      expect(await ledger.claimPaymentId(paymentId, binding, later)).toEqual({ kind: 'claimed' });
    });

    it('answers 502 for a refused deposit whose transaction was sent, 402 for one refused before', async () => {
      const refusedAfter = (sent: boolean) => () => {
        const trace = settlementTraces.getStore();
        expect(trace).toBeDefined();
        Object.assign(trace ?? {}, { observed: true, broadcast: sent });
        return Promise.resolve({
          ...settlement(false, 'invalid_batch_settlement_evm_deposit_transaction_failed'),
        });
      };

      settleBatch = refusedAfter(true);
      await expectUnknown(runBatch(batchPayment('deposit')));

      settleBatch = refusedAfter(false);
      const refusal = await rejectionOf(runBatch(batchPayment('deposit')));
      expect(refusal).not.toBeInstanceOf(ApiError);
      expect(paywall.challengeReasons.at(-1)).toBe(
        'settlement_failed: invalid_batch_settlement_evm_deposit_transaction_failed',
      );
    });
  });
});
