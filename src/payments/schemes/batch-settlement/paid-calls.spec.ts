import { InMemoryChannelStorage, type Channel } from '@x402/evm/batch-settlement/server';
import {
  CHANNEL_CONFIG,
  OFFERED,
  channelRecord,
} from '../../../../test/support/payment-doubles.js';
import type { AcceptedBatchPayment } from './batch-acceptance.js';
import { onlyReservation } from '../../channels/channel-holds.js';
import {
  LOST_ANSWER_WINDOW_MS,
  PaidCallStamps,
  soldFor,
  withoutPaidCall,
  type PaidCall,
} from './paid-calls.js';

const CHANNEL_ID = `0x${'ab'.repeat(32)}` as const;
const FIRST_SIGNATURE = `0x${'1b'.repeat(65)}`;
const NEXT_SIGNATURE = `0x${'1C'.repeat(65)}`;
const CALL: PaidCall = { paymentId: 'pay_0123456789abcdef', resource: 'GET /v1/ticker/BTC' };

const recorded: Channel = channelRecord({ channelId: CHANNEL_ID });

/** The SDK's reservation of the channel for the voucher signed `signature` (a new record). */
function reserve(
  storage: ReturnType<PaidCallStamps['stamping']>,
  pendingId: string,
  signature = NEXT_SIGNATURE,
  amount = '4000',
) {
  return storage.updateChannel(CHANNEL_ID, (current) => ({
    ...recorded,
    chargedCumulativeAmount: current!.chargedCumulativeAmount,
    totalClaimed: current!.totalClaimed,
    signedMaxClaimable: amount,
    signature,
    pendingRequest: { pendingId, signedMaxClaimable: amount, expiresAt: Date.now() + 60_000 },
  }));
}

/** The SDK's commit of the reserved voucher's charge (a spread of the record). */
function charge(storage: ReturnType<PaidCallStamps['stamping']>, amount = '4000') {
  return storage.updateChannel(CHANNEL_ID, (current) => ({
    ...current!,
    chargedCumulativeAmount: amount,
    pendingRequest: undefined,
  }));
}

function payment(signature: string, amount: string): AcceptedBatchPayment {
  return {
    payload: { x402Version: 2, accepted: OFFERED, payload: {} },
    requirement: OFFERED,
    kind: 'voucher',
    channelId: CHANNEL_ID,
    payer: CHANNEL_CONFIG.payer,
    maxClaimableAmount: amount,
    signature: signature as `0x${string}`,
  };
}

describe('PaidCallStamps', () => {
  let inner: InMemoryChannelStorage;
  let stamps: PaidCallStamps;
  let storage: ReturnType<PaidCallStamps['stamping']>;
  let now: number;

  beforeEach(async () => {
    inner = new InMemoryChannelStorage();
    await inner.updateChannel(CHANNEL_ID, () => recorded);
    now = 1_000_000;
    stamps = new PaidCallStamps(() => now);
    storage = stamps.stamping(inner);
  });

  async function sellNext(call: PaidCall | undefined, pendingId = 'p'): Promise<void> {
    await reserve(storage, pendingId);
    await stamps.record(pendingId, call, () => charge(storage));
  }

  it('keeps what streams and claim rounds added to the record through every rebuild the SDK writes, charge or not; this service drops a field by setting it undefined', async () => {
    const service = {
      coverHigh: '9000',
      claiming: [{ by: 'a', total: '2000', until: now + 1000 }],
      lastStreamCharge: '2000',
      lastStreamChargeId: 'c1',
      lastStreamContent: '{}',
    };
    await inner.updateChannel(CHANNEL_ID, (current) => ({ ...current!, ...service }));
    // the SDK rebuilds the record from its own fields: the same charge, then a new one
    await storage.updateChannel(CHANNEL_ID, () => ({ ...recorded, balance: '50000' }));
    expect(await inner.get(CHANNEL_ID)).toMatchObject({ balance: '50000', ...service });
    await storage.updateChannel(CHANNEL_ID, () => ({
      ...recorded,
      chargedCumulativeAmount: '4000',
    }));
    expect(await inner.get(CHANNEL_ID)).toMatchObject({
      chargedCumulativeAmount: '4000',
      ...service,
    });
    await storage.updateChannel(CHANNEL_ID, (current) => ({ ...current!, claiming: undefined }));
    expect((await inner.get(CHANNEL_ID)) as unknown as Record<string, unknown>).toMatchObject({
      claiming: undefined,
      coverHigh: '9000',
    });
  });

  it('writes the call into the record in the update that charges its voucher', async () => {
    await sellNext(CALL);
    const channel = await inner.get(CHANNEL_ID);
    expect(channel).toMatchObject({
      chargedCumulativeAmount: '4000',
      paidCall: { paymentId: CALL.paymentId, at: now },
    });
    expect(soldFor(channel, payment(NEXT_SIGNATURE.toLowerCase(), '4000'), CALL, now)).toBe(true);
  });

  it('stamps only the charge of the request holding the reservation it was recorded under', async () => {
    await reserve(storage, 'other');
    await stamps.record('p', CALL, () => charge(storage));
    expect(await inner.get(CHANNEL_ID)).not.toHaveProperty('paidCall');
    await sellNext(undefined, 'q');
    await stamps.record(undefined, CALL, () => charge(storage, '6000'));
    expect(await inner.get(CHANNEL_ID)).not.toHaveProperty('paidCall');
  });

  it('keeps the stamp through a claim and a later reservation (still only a reservation), and drops it with the next charge written without an id', async () => {
    await sellNext(CALL);
    await storage.updateChannel(CHANNEL_ID, (current) => ({ ...current!, totalClaimed: '4000' }));
    const claimed = await inner.get(CHANNEL_ID);
    expect(claimed).toHaveProperty('paidCall');

    const third = `0x${'1d'.repeat(65)}`;
    await reserve(storage, 'r', third, '6000');
    const reserved = await inner.get(CHANNEL_ID);
    expect(reserved).toHaveProperty('paidCall');
    expect(onlyReservation(claimed, reserved)).toBe(true);
    // the stamp describes the charge, not the reservation's voucher
    expect(soldFor(reserved, payment(NEXT_SIGNATURE, '4000'), CALL, now)).toBe(false);
    expect(soldFor(reserved, payment(third, '6000'), CALL, now)).toBe(false);

    await charge(storage, '6000');
    expect(await inner.get(CHANNEL_ID)).not.toHaveProperty('paidCall');
  });

  it('is sold only for the latest voucher, charged in full, under the same id and resource, within the window', async () => {
    await sellNext(CALL);
    const channel = await inner.get(CHANNEL_ID);
    const next = payment(NEXT_SIGNATURE, '4000');
    expect(soldFor(channel, next, CALL, now)).toBe(true);
    expect(soldFor(channel, payment(FIRST_SIGNATURE, '2000'), CALL, now)).toBe(false);
    expect(soldFor(channel, next, { ...CALL, paymentId: 'pay_another_id_000001' }, now)).toBe(
      false,
    );
    expect(soldFor(channel, next, { ...CALL, resource: 'GET /v1/all-tickers' }, now)).toBe(false);
    expect(soldFor(undefined, next, CALL, now)).toBe(false);
    expect(soldFor(channel, next, CALL, now + LOST_ANSWER_WINDOW_MS)).toBe(true);
    expect(soldFor(channel, next, CALL, now + LOST_ANSWER_WINDOW_MS + 1)).toBe(false);
    // its charge taken back (the call was not sold after all), or the stamp dropped
    expect(soldFor({ ...channel!, chargedCumulativeAmount: '2000' }, next, CALL, now)).toBe(false);
    expect(soldFor(withoutPaidCall(channel!), next, CALL, now)).toBe(false);
  });
});
