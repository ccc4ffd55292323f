/**
 * Paid price streams (GET /v1/stream/{symbols}) on a local anvil with the embedded facilitator:
 * the buyer's channel is opened by the official batch-settlement client, the stream's voucher
 * is created by the same client for the stream's requirement with its budget as `amount`, the
 * fake venues' prices are moved between polls, and the money is counted on chain.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { signVoucher } from '@x402/evm/batch-settlement/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { BatchChannels } from '../src/payments/schemes/batch-settlement/batch-channels.js';
import {
  batchBuyer,
  CLAIMS_BY_HAND,
  voucherHeader,
  type BatchBuyer,
} from './support/batch-channel.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { SseClient } from './support/sse-client.js';
import { paymentRequiredOf } from './support/x402-payloads.js';

const UNIT = 100n;

describe('paid price streams', () => {
  let stack: PaidApp;
  let channels: BatchChannels;
  let step = 0;

  beforeAll(async () => {
    stack = await startPaidApp({
      env: {
        X402_BATCH_DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'x402-streams-e2e-')),
        ...CLAIMS_BY_HAND,
        STREAM_TOPUP_WAIT_MS: '30000',
        STREAM_KEEPALIVE_MS: '500',
        STREAM_MAX_PER_PAYER: '1',
        // the venues are polled on their own timers: a price moved at a venue shows within a second
        PRICE_REFRESH_MS: '1000',
      },
    });
    channels = stack.service.app.get(BatchChannels);
  });

  afterAll(async () => {
    await stack.close();
  });

  /** Moves every venue's prices a little: the next polls (every second) move BTC's price. */
  function movePrices(): void {
    step += 1;
    const factor = 1 + (step % 2 === 0 ? 1 : -1) * 0.0005 * step;
    for (const id of stack.markets.venues.keys()) stack.markets.scale(id, factor);
  }

  /** Moves prices until `done`, waiting for the stream to see each move. */
  async function moveUntil(stream: SseClient, done: () => boolean, maxMoves = 30): Promise<void> {
    for (let moves = 0; !done(); moves += 1) {
      if (moves >= maxMoves) throw new Error(`not after ${maxMoves} moves: ${stream.body}`);
      const seen = stream.events.length;
      movePrices();
      await stream.until((events) => events.length > seen || done(), 3000).catch(() => undefined);
    }
  }

  async function streamRequirement(symbols = 'BTC'): Promise<PaymentRequirements> {
    const challenge = await stack.service.get(`/v1/stream/${symbols}`);
    expect(challenge.status).toBe(402);
    const [only] = paymentRequiredOf(challenge).accepts;
    if (only === undefined) throw new Error('no offer');
    return only;
  }

  /** A buyer whose channel is open (one ticker bought with batch-settlement), claimed to date. */
  async function openChannel(): Promise<{ buyer: BatchBuyer; channelId: `0x${string}` }> {
    const buyer = await batchBuyer(stack.chain, { depositMultiplier: 10 });
    expect((await buyer.fetch(`${stack.service.url}/v1/ticker/BTC`)).status).toBe(200);
    const channelId = (buyer.sent[0]?.payload as { voucher: { channelId: `0x${string}` } }).voucher
      .channelId;
    await channels.claimAndSettle();
    return { buyer, channelId };
  }

  /** The official client's payload for the stream's requirement with `budget` as its amount. */
  async function streamPayment(
    buyer: BatchBuyer,
    requirement: PaymentRequirements,
    budget: bigint,
  ): Promise<PaymentPayload> {
    const accepted = { ...requirement, amount: budget.toString() };
    const created = await buyer.scheme.createPaymentPayload(2, accepted);
    return { x402Version: 2, accepted, payload: created.payload };
  }

  const charged = async (channelId: string): Promise<bigint> =>
    BigInt((await channels.channels().get(channelId))?.chargedCumulativeAmount ?? '0');

  it('answers an unpaid stream 402 offering only batch-settlement at 100 per update', async () => {
    const requirement = await streamRequirement('BTC,ETH');
    const challenge = await stack.service.get('/v1/stream/BTC,ETH');
    expect(paymentRequiredOf(challenge).accepts).toHaveLength(1);
    expect(requirement).toMatchObject({
      scheme: 'batch-settlement',
      amount: '100',
      payTo: stack.payTo,
      extra: { stream: { unit: 'update' }, withdrawDelay: 900 },
    });
  });

  it('checks symbols and options before any 402', async () => {
    expect((await stack.service.get('/v1/stream/BTC,,ETH')).status).toBe(400);
    expect((await stack.service.get('/v1/stream/NOPE1')).status).toBe(404);
    expect((await stack.service.get('/v1/stream/BTC?maxHz=50')).status).toBe(400);
    const many = Array.from({ length: 26 }, (_, index) => `S${index}`).join(',');
    expect((await stack.service.get(`/v1/stream/${many}`)).status).toBe(400);
  });

  it('refuses an exact payment with a 402: a transfer cannot pay per update', async () => {
    const ticker = paymentRequiredOf(await stack.service.get('/v1/ticker/BTC')).accepts.find(
      (accept) => accept.scheme === 'exact',
    )!;
    const exact = { ...ticker, amount: '500' };
    const created = await new ExactEvmScheme(stack.buyer.account).createPaymentPayload(2, exact);
    const answer = await stack.service.get('/v1/stream/BTC', {
      headers: {
        'payment-signature': encodePaymentSignatureHeader({
          x402Version: 2,
          accepted: exact,
          payload: created.payload,
        }),
      },
    });
    expect(answer.status).toBe(402);
    expect(paymentRequiredOf(answer).error).toMatch(/payment_not_offered/);
  });

  it('streams exactly the budget, asks for more, goes on after a top-up; the claim is updates delivered × 100', async () => {
    const { buyer, channelId } = await openChannel();
    const before = await stack.chain.usdcBalance(stack.payTo);
    const base = await charged(channelId);
    const requirement = await streamRequirement();
    const payment = await streamPayment(buyer, requirement, 5n * UNIT);
    expect((payment.payload as { type: string }).type).toBe('voucher');
    const stream = await SseClient.open(`${stack.service.url}/v1/stream/BTC?maxHz=10`, {
      'payment-signature': encodePaymentSignatureHeader(payment),
    });
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(stream.headers['cache-control']).toBe('no-store');
    await stream.until((events) => events.some((event) => event.event === 'open'));
    const open = stream.named('open')[0]!.data as Record<string, unknown>;
    expect(open).toMatchObject({
      channelId,
      unitPrice: '100',
      charged: base.toString(),
      covered: (base + 5n * UNIT).toString(),
      symbols: ['BTC'],
    });
    // nothing is charged for opening
    expect(await charged(channelId)).toBe(base);

    await moveUntil(stream, () => stream.named('payment-required').length > 0);
    const prices = stream.named('price');
    expect(prices).toHaveLength(5);
    expect(prices.map((event) => event.id)).toEqual(
      [1n, 2n, 3n, 4n, 5n].map((n) => (base + n * UNIT).toString()),
    );
    const first = prices[0]!.data as Record<string, unknown>;
    expect(first).toMatchObject({ currency: 'USD', price: { BTC: expect.any(Number) as number } });
    expect(typeof first.attestation).toBe('string');
    const required = stream.named('payment-required')[0]!.data as Record<string, unknown>;
    expect(required).toMatchObject({ streamId: open.streamId, x402Version: 2 });
    expect(await charged(channelId)).toBe(base + 5n * UNIT);

    // the top-up: a voucher on the same channel for the charged total plus three updates
    const topUp = await signVoucher(
      buyer.account,
      channelId,
      (base + 8n * UNIT).toString(),
      requirement.network,
    );
    const raw = buyer.sent[0]!.payload as { channelConfig: object };
    const accepted = { ...requirement, amount: (3n * UNIT).toString() };
    const raised = await fetch(`${stack.service.url}/v1/stream/${String(open.streamId)}/payment`, {
      method: 'POST',
      headers: {
        'payment-signature': encodePaymentSignatureHeader({
          x402Version: 2,
          accepted,
          payload: { type: 'voucher', channelConfig: raw.channelConfig, voucher: topUp },
        }),
      },
    });
    expect(raised.status).toBe(200);
    const forged = await signVoucher(
      privateKeyToAccount(generatePrivateKey()),
      channelId,
      (base + 9n * UNIT).toString(),
      requirement.network,
    );
    const topUpWith = (id: string, headers: Record<string, string>) =>
      fetch(`${stack.service.url}/v1/stream/${id}/payment`, { method: 'POST', headers });
    const forgedHeader = encodePaymentSignatureHeader({
      x402Version: 2,
      accepted: { ...requirement, amount: UNIT.toString() },
      payload: { type: 'voucher', channelConfig: raw.channelConfig, voucher: forged },
    });
    const refused = await topUpWith(String(open.streamId), { 'payment-signature': forgedHeader });
    expect(refused.status).toBe(402);
    expect(paymentRequiredOf(refused).error).toMatch(/voucher_signature/);
    // a header that does not decode is refused before the stream is looked up
    expect((await topUpWith('no-such-stream', { 'payment-signature': 'x' })).status).toBe(400);
    expect((await topUpWith('no-such-stream', { 'payment-signature': forgedHeader })).status).toBe(
      404,
    );
    expect((await topUpWith(String(open.streamId), {})).status).toBe(400);
    expect(await raised.json()).toEqual({
      streamId: open.streamId,
      charged: (base + 5n * UNIT).toString(),
      covered: (base + 8n * UNIT).toString(),
    });
    await moveUntil(stream, () => stream.named('payment-required').length > 1);
    expect(stream.named('price')).toHaveLength(8);
    stream.destroy();

    const delivered = BigInt(stream.named('price').length);
    expect(await charged(channelId)).toBe(base + delivered * UNIT);
    await channels.claimAndSettle();
    expect(await stack.chain.usdcBalance(stack.payTo)).toBe(before + delivered * UNIT);
  });

  it('refuses underfunded, replayed and foreign vouchers with a 402 naming why, charging nothing', async () => {
    const { buyer, channelId } = await openChannel();
    const requirement = await streamRequirement();
    const base = await charged(channelId);
    const raw = buyer.sent[0]!.payload as { channelConfig: object };
    const refusal = async (max: bigint, budget: bigint, signer = buyer.account) => {
      const voucher = await signVoucher(signer, channelId, max.toString(), requirement.network);
      const answer = await stack.service.get('/v1/stream/BTC', {
        headers: {
          'payment-signature': encodePaymentSignatureHeader({
            x402Version: 2,
            accepted: { ...requirement, amount: budget.toString() },
            payload: { type: 'voucher', channelConfig: raw.channelConfig, voucher },
          }),
        },
      });
      expect(answer.status).toBe(402);
      return paymentRequiredOf(answer).error ?? '';
    };
    const balance = BigInt((await channels.channels().get(channelId))!.balance);
    const over = (balance - base + UNIT) / UNIT;
    expect(await refusal(base + over * UNIT, over * UNIT)).toMatch(/exceeds_balance/);
    // the voucher the ticker was bought with, sent again: charged in full already
    expect(await refusal(base, UNIT)).toMatch(/stream_voucher_spent/);
    expect(await refusal(base + UNIT, UNIT, privateKeyToAccount(generatePrivateKey()))).toMatch(
      /voucher_signature/,
    );
    expect(await refusal(base + 150n, 150n)).toMatch(/stream_budget_invalid/);
    expect(await refusal(base + 1_000_100n, 1_000_100n)).toMatch(
      /stream_budget_invalid: .* at most 1000000/,
    );
    expect(await charged(channelId)).toBe(base);

    // a stream's voucher is its channel's cover, public once a claim puts it on chain: sent
    // again it opens nothing (anyone could send it), only a new signature above it does
    const cover = await signVoucher(
      buyer.account,
      channelId,
      (base + 3n * UNIT).toString(),
      requirement.network,
    );
    const header = encodePaymentSignatureHeader({
      x402Version: 2,
      accepted: { ...requirement, amount: (3n * UNIT).toString() },
      payload: { type: 'voucher', channelConfig: raw.channelConfig, voucher: cover },
    });
    const url = `${stack.service.url}/v1/stream/BTC?minMoveBps=10000`;
    const first = await SseClient.open(url, { 'payment-signature': header });
    expect(first.status).toBe(200);
    await first.until((events) => events.some((event) => event.event === 'open'));
    first.destroy();
    const replay = () =>
      stack.service.get('/v1/stream/BTC?minMoveBps=10000', {
        headers: { 'payment-signature': header, 'last-event-id': '0' },
      });
    // the first stream holds its payer's slot until the service sees its socket closed
    let again = await replay();
    for (let tries = 0; again.status === 429 && tries < 50; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      again = await replay();
    }
    expect(again.status).toBe(402);
    expect(paymentRequiredOf(again).error).toMatch(/stream_voucher_spent: .* new voucher above/);
    expect(await charged(channelId)).toBe(base);
  });

  it('checks a voucher against the chain when the channel record’s on-chain state is old', async () => {
    const { buyer, channelId } = await openChannel();
    await channels
      .channels()
      .updateChannel(channelId, (current) =>
        current === undefined ? current : { ...current, onchainSyncedAt: 1 },
      );
    const requirement = await streamRequirement();
    const payment = await streamPayment(buyer, requirement, 3n * UNIT);
    const stream = await SseClient.open(`${stack.service.url}/v1/stream/BTC`, {
      'payment-signature': encodePaymentSignatureHeader(payment),
    });
    expect(stream.status).toBe(200);
    await stream.until((events) => events.some((event) => event.event === 'open'));
    stream.destroy();
    const record = await channels.channels().get(channelId);
    expect(Date.now() - (record?.onchainSyncedAt ?? 0)).toBeLessThan(60_000);
    expect(record?.signedMaxClaimable).toBe(
      (BigInt(record!.chargedCumulativeAmount) + 3n * UNIT).toString(),
    );
  });

  it('takes a per-request voucher on the same channel mid-stream: it charges the next exact amount and uses the cover up', async () => {
    const { buyer, channelId } = await openChannel();
    const requirement = await streamRequirement();
    const payment = await streamPayment(buyer, requirement, 10n * UNIT);
    const stream = await SseClient.open(`${stack.service.url}/v1/stream/BTC?maxHz=10`, {
      'payment-signature': encodePaymentSignatureHeader(payment),
    });
    await moveUntil(stream, () => stream.named('price').length >= 2);
    // one stream per payer here (STREAM_MAX_PER_PAYER=1): a second is refused before its voucher is looked at
    const second = await stack.service.get('/v1/stream/ETH', {
      headers: { 'payment-signature': encodePaymentSignatureHeader(payment) },
    });
    expect(second.status).toBe(429);
    expect(await second.json()).toMatchObject({ code: 'stream_limit' });
    const before = await charged(channelId);
    const ticker = paymentRequiredOf(await stack.service.get('/v1/ticker/BTC')).accepts.find(
      (accept) => accept.scheme === 'batch-settlement',
    )!;
    const raw = buyer.sent[0]!.payload as { channelConfig: object };
    const next = await signVoucher(
      buyer.account,
      channelId,
      (before + 2000n).toString(),
      ticker.network,
    );
    const bought = await stack.service.get('/v1/ticker/BTC', {
      headers: { 'payment-signature': voucherHeader(ticker, raw.channelConfig, next) },
    });
    expect(bought.status).toBe(200);
    expect(await charged(channelId)).toBe(before + 2000n);
    // the voucher signed only the ticker: the stream's cover is used up
    await moveUntil(stream, () => stream.named('payment-required').length > 0);
    expect(await charged(channelId)).toBe(before + 2000n);
    stream.destroy();
  });

  it('charges nothing after the client goes away', async () => {
    const { buyer, channelId } = await openChannel();
    const base = await charged(channelId);
    const requirement = await streamRequirement();
    const payment = await streamPayment(buyer, requirement, 20n * UNIT);
    const stream = await SseClient.open(`${stack.service.url}/v1/stream/BTC?maxHz=10`, {
      'payment-signature': encodePaymentSignatureHeader(payment),
    });
    await moveUntil(stream, () => stream.named('price').length >= 2);
    stream.destroy();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const atDeparture = await charged(channelId);
    for (let moves = 0; moves < 3; moves += 1) {
      movePrices();
      await new Promise((resolve) => setTimeout(resolve, 1200));
    }
    expect(await charged(channelId)).toBe(atDeparture);
    // what was charged was delivered: at most the update in flight at the cut went out unread
    expect(atDeparture - base).toBeGreaterThanOrEqual(BigInt(stream.named('price').length) * UNIT);
    expect(atDeparture - base).toBeLessThanOrEqual(BigInt(stream.named('price').length + 1) * UNIT);
  });
});
