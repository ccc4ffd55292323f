import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSigner, getBase58Decoder } from '@solana/kit';
import type { PaymentRequirements, SettleResponse } from '@x402/core/types';
import { SOLANA_DEVNET_CAIP2, USDC_DEVNET_ADDRESS } from '@x402/svm';
import { ApiError } from '../../../common/api-error.js';
import { MetricsService } from '../../../metrics/metrics.service.js';
import { InMemoryPaymentLedger } from '../../ledger/payment-ledger.js';
import type { PaymentConfig } from '../../payments.settings.js';
import { PaymentIdentifiers } from '../../paywall/payment-identifiers.js';
import type { X402Paywall } from '../../paywall/x402-paywall.js';
import { SvmSettlement, buyerKey, type SvmPaymentInProgress } from './svm-settlement.js';
import type { AcceptedSvmPayment } from './svm-acceptance.js';
import { SvmReconciler } from './svm-reconciler.js';

/** A ledger whose next `failures` settlement writes fail, as a Redis that went away. */
class FailingLedger extends InMemoryPaymentLedger {
  failures = 0;

  override settle(fingerprint: string, expiresAt: number): Promise<void> {
    if (this.failures > 0) return this.fail();
    return super.settle(fingerprint, expiresAt);
  }

  override resolveSettled(fingerprint: string, expiresAt: number): Promise<boolean> {
    if (this.failures > 0) return this.fail();
    return super.resolveSettled(fingerprint, expiresAt);
  }

  private fail(): Promise<never> {
    this.failures -= 1;
    return Promise.reject(new Error('shared_state_unavailable: injected'));
  }
}

/**
 * A Solana JSON-RPC answering what the chain reader asks: the confirmed slot (`slot`, or an
 * error with `slotFails`) and the signature's status, landed in `landedSlot`.
 */
class ScriptedSolanaRpc {
  landed = false;
  slot = 10;
  landedSlot = 11;
  slotFails = false;
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const { id, method } = JSON.parse(body) as { id: number; method: string };
        const context = { slot: this.slot };
        const landing = {
          slot: this.landedSlot,
          confirmations: null,
          err: null,
          confirmationStatus: 'confirmed',
        };
        const result =
          method === 'getSlot'
            ? this.slot
            : method === 'isBlockhashValid'
              ? { context, value: true }
              : { context, value: [this.landed ? landing : null] };
        const answer =
          method === 'getSlot' && this.slotFails
            ? { jsonrpc: '2.0', id, error: { code: -32005, message: 'node is behind' } }
            : { jsonrpc: '2.0', id, result };
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

const BODY = { price: { BTC: 1 } };

/** One instance's Solana settlement over `ledger`, whose facilitator answers `settlement`. */
function instance(
  ledger: InMemoryPaymentLedger,
  settlement: () => SettleResponse,
  rpcUrl?: string,
): { scheme: SvmSettlement; reconciler: SvmReconciler } {
  const payments = {
    settleTimeoutMs: 1000,
    ...(rpcUrl === undefined ? {} : { solana: { rpcUrl } }),
  } as unknown as PaymentConfig;
  const metrics = new MetricsService();
  const identifiers = new PaymentIdentifiers(ledger);
  const reconciler = new SvmReconciler(ledger, metrics, identifiers, payments);
  const paywall = { settle: () => Promise.resolve(settlement()) } as unknown as X402Paywall;
  const scheme = new SvmSettlement(ledger, payments, paywall, reconciler, identifiers, metrics);
  return { scheme, reconciler };
}

describe('SvmSettlement after the transfer was sent', () => {
  let sale: SvmPaymentInProgress;
  let signature: string;
  let rpc: ScriptedSolanaRpc;
  let rpcUrl: string;

  beforeAll(async () => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    rpc = new ScriptedSolanaRpc();
    rpcUrl = await rpc.start();
  });

  afterAll(async () => {
    await rpc.close();
    jest.restoreAllMocks();
  });

  beforeEach(async () => {
    rpc.landed = false;
    rpc.slot = 10;
    rpc.landedSlot = 11;
    rpc.slotFails = false;
    const [feePayer, buyer] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
    const messageBytes = crypto.getRandomValues(new Uint8Array(200));
    // the fee payer's signature of the message: the transaction's id
    const [signed] = await feePayer.signMessages([{ content: messageBytes, signatures: {} }]);
    const bytes = signed?.[feePayer.address];
    if (bytes === undefined) throw new Error('the fee payer did not sign');
    signature = getBase58Decoder().decode(bytes);
    const requirement: PaymentRequirements = {
      scheme: 'exact',
      network: SOLANA_DEVNET_CAIP2,
      asset: USDC_DEVNET_ADDRESS,
      amount: '2000',
      payTo: buyer.address,
      maxTimeoutSeconds: 60,
      extra: { feePayer: feePayer.address },
    };
    const accepted: AcceptedSvmPayment = {
      requirement,
      transaction: 'AQID',
      messageBytes,
      feePayer: feePayer.address,
      payer: buyer.address,
      payerSignature: `buyer-${crypto.randomUUID()}`,
      blockhash: 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1EtWTRABZaYq6',
    };
    sale = {
      accepted,
      payment: {} as SvmPaymentInProgress['payment'],
      version: 2,
      fingerprint: `svm:${accepted.payerSignature}`,
      expiresAt: Date.now() + 60_000,
      paymentId: undefined,
      context: {
        route: '/v1/ticker/:symbol',
        resource: 'GET /v1/ticker/BTC',
        label: 'GET /v1/ticker/BTC',
        signal: new AbortController().signal,
      },
    };
  });

  const landed = (): SettleResponse => ({
    success: true,
    transaction: signature,
    network: SOLANA_DEVNET_CAIP2,
  });
  const pending = (): SettleResponse => ({
    success: false,
    errorReason: 'settlement_pending',
    transaction: signature,
    network: SOLANA_DEVNET_CAIP2,
  });

  /** The scheme's claims, as open() takes them. */
  async function claimed(ledger: InMemoryPaymentLedger): Promise<void> {
    expect(await ledger.claim(sale.fingerprint, sale.expiresAt)).toBe('claimed');
    expect(await ledger.claim(buyerKey(sale.accepted.payer), sale.expiresAt)).toBe('claimed');
  }

  it('delivers the paid answer when the ledger cannot record a settlement the chain shows', async () => {
    const ledger = new FailingLedger();
    ledger.failures = 1;
    const { scheme } = instance(ledger, landed);
    await claimed(ledger);
    await expect(scheme.close(sale, BODY)).resolves.toEqual({
      kind: 'settled',
      receipt: {
        success: true,
        transaction: signature,
        network: SOLANA_DEVNET_CAIP2,
        payer: sale.accepted.payer,
      },
    });
    // the buyer may pay again
    expect(await ledger.claim(buyerKey(sale.accepted.payer), sale.expiresAt)).toBe('claimed');
  });

  it('records an unknown outcome in the shared ledger: another instance answers 502, and its sweep reconciles it', async () => {
    const ledger = new InMemoryPaymentLedger();
    const first = instance(ledger, pending, rpcUrl);
    const second = instance(ledger, pending, rpcUrl);
    await claimed(ledger);
    await expect(first.scheme.close(sale, BODY)).resolves.toEqual({
      kind: 'unknown',
      transaction: signature,
      reason: 'settlement_pending',
    });
    first.reconciler.onModuleDestroy(); // the first instance stops (its watch with it)
    // any instance: the same payment is uncertain (502), never in flight (402)
    expect(await ledger.claim(sale.fingerprint, sale.expiresAt)).toBe('uncertain');
    expect(second.reconciler.holds(sale.fingerprint)).toBe(false);
    await second.reconciler.sweep();
    second.reconciler.onModuleDestroy(); // its passes are run here, one by one
    expect(second.reconciler.holds(sale.fingerprint)).toBe(true);
    await second.reconciler.reconcile();
    expect(await ledger.claim(sale.fingerprint, sale.expiresAt)).toBe('uncertain');
    rpc.landed = true;
    await second.reconciler.reconcile();
    second.reconciler.onModuleDestroy();
    expect(second.reconciler.holds(sale.fingerprint)).toBe(false);
    expect(await ledger.claim(sale.fingerprint, sale.expiresAt)).toBe('settled');
    expect(await ledger.uncertainSales()).toEqual([]);
  });

  it('refuses (402, recorded used) a transaction the chain shows landed before this request sent it', async () => {
    const ledger = new InMemoryPaymentLedger();
    const { scheme } = instance(ledger, landed, rpcUrl);
    await claimed(ledger);
    rpc.landed = true;
    rpc.landedSlot = rpc.slot; // in the last slot confirmed before the send
    const outcome = await scheme.close(sale, BODY);
    expect(outcome.kind).toBe('used');
    expect(outcome.kind === 'used' ? outcome.reason : '').toContain(
      `payment_already_used: transaction ${signature} had landed before this request sent it`,
    );
    expect(await ledger.claim(sale.fingerprint, sale.expiresAt)).toBe('settled');
    expect(await ledger.claim(buyerKey(sale.accepted.payer), sale.expiresAt)).toBe('claimed');
  });

  it('sends nothing while the chain cannot be read: 503, the claims given back', async () => {
    const ledger = new InMemoryPaymentLedger();
    let sent = 0;
    const { scheme } = instance(ledger, () => (sent++, landed()), rpcUrl);
    await claimed(ledger);
    rpc.slotFails = true;
    const refused = await scheme.close(sale, BODY).catch((e: unknown) => e);
    expect((refused as ApiError).status).toBe(503);
    expect(sent).toBe(0);
    expect(await ledger.claim(sale.fingerprint, sale.expiresAt)).toBe('claimed');
  });

  it('reconciles an unknown sale whose transaction had landed before it was sent as used, selling nothing', async () => {
    const ledger = new InMemoryPaymentLedger();
    const { scheme, reconciler } = instance(ledger, pending, rpcUrl);
    const paymentId = `svm-${crypto.randomUUID()}`;
    sale = { ...sale, paymentId };
    const binding = { fingerprint: sale.fingerprint, signatureDigest: 'd', resource: 'r' };
    await ledger.claimPaymentId(paymentId, binding, sale.expiresAt);
    await claimed(ledger);
    await expect(scheme.close(sale, BODY)).resolves.toMatchObject({ kind: 'unknown' });
    reconciler.onModuleDestroy(); // its passes are run here, one by one
    rpc.landed = true;
    rpc.landedSlot = rpc.slot - 1;
    await reconciler.reconcile();
    reconciler.onModuleDestroy();
    expect(reconciler.holds(sale.fingerprint)).toBe(false);
    expect(await ledger.claim(sale.fingerprint, sale.expiresAt)).toBe('settled');
    // no answer stored: the id sold nothing and is free again
    expect(await ledger.claimPaymentId(paymentId, binding, sale.expiresAt)).toEqual({
      kind: 'claimed',
    });
  });

  it('keeps reconciling a landed sale until the ledger records it, and stores its answer', async () => {
    const ledger = new FailingLedger();
    const { scheme, reconciler } = instance(ledger, pending, rpcUrl);
    const paymentId = `svm-${crypto.randomUUID()}`;
    sale = { ...sale, paymentId };
    const binding = { fingerprint: sale.fingerprint, signatureDigest: 'd', resource: 'r' };
    expect(await ledger.claimPaymentId(paymentId, binding, sale.expiresAt)).toEqual({
      kind: 'claimed',
    });
    await claimed(ledger);
    await expect(scheme.close(sale, BODY)).resolves.toMatchObject({ kind: 'unknown' });
    reconciler.onModuleDestroy(); // its passes are run here, one by one
    rpc.landed = true;
    ledger.failures = 1;
    await reconciler.reconcile();
    expect(reconciler.holds(sale.fingerprint)).toBe(true);
    await reconciler.reconcile();
    reconciler.onModuleDestroy();
    expect(reconciler.holds(sale.fingerprint)).toBe(false);
    expect(await ledger.claim(sale.fingerprint, sale.expiresAt)).toBe('settled');
    expect(await ledger.claimPaymentId(paymentId, binding, sale.expiresAt)).toMatchObject({
      kind: 'stored',
      response: { status: 200, body: BODY },
    });
  });
});
