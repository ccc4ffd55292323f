import { InMemoryChannelStorage, type Channel } from '@x402/evm/batch-settlement/server';
import { CHANNEL_CONFIG, OFFERED } from '../../../../test/support/payment-doubles.js';
import type { AcceptedBatchPayment } from './batch-acceptance.js';
import { PaidCallStamps, soldFor, type PaidCall } from './paid-calls.js';

const CHANNEL_ID = `0x${'ab'.repeat(32)}` as const;
const FIRST_SIGNATURE = `0x${'1b'.repeat(65)}`;
const NEXT_SIGNATURE = `0x${'1C'.repeat(65)}`;
const CALL: PaidCall = { paymentId: 'pay_0123456789abcdef', resource: 'GET /v1/ticker/BTC' };

const recorded: Channel = {
  channelId: CHANNEL_ID,
  channelConfig: CHANNEL_CONFIG,
  chargedCumulativeAmount: '2000',
  signedMaxClaimable: '2000',
  signature: FIRST_SIGNATURE,
  balance: '100000',
  totalClaimed: '0',
  withdrawRequestedAt: 0,
  refundNonce: 0,
  lastRequestTimestamp: 1,
};

/** The SDK's two writes of a voucher: its reservation (a new record), then its charge (a spread). */
async function sellNext(storage: ReturnType<PaidCallStamps['stamping']>): Promise<void> {
  await storage.updateChannel(CHANNEL_ID, (current) => ({
    ...recorded,
    chargedCumulativeAmount: current!.chargedCumulativeAmount,
    signedMaxClaimable: '4000',
    signature: NEXT_SIGNATURE,
    pendingRequest: { pendingId: 'p', signedMaxClaimable: '4000', expiresAt: Date.now() + 60_000 },
  }));
  await storage.updateChannel(CHANNEL_ID, (current) => ({
    ...current!,
    chargedCumulativeAmount: '4000',
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

  beforeEach(async () => {
    inner = new InMemoryChannelStorage();
    await inner.updateChannel(CHANNEL_ID, () => recorded);
    stamps = new PaidCallStamps();
    storage = stamps.stamping(inner);
  });

  it('writes the call into the record in the update that charges its voucher', async () => {
    await stamps.record(NEXT_SIGNATURE, CALL, () => sellNext(storage));
    const channel = await inner.get(CHANNEL_ID);
    expect(channel).toMatchObject({ chargedCumulativeAmount: '4000', paidCall: CALL });
    expect(soldFor(channel, payment(NEXT_SIGNATURE.toLowerCase(), '4000'), CALL)).toBe(true);
  });

  it('keeps the stamp through a claim, and drops it with the next voucher sold without an id', async () => {
    await stamps.record(NEXT_SIGNATURE, CALL, () => sellNext(storage));
    await storage.updateChannel(CHANNEL_ID, (current) => ({ ...current!, totalClaimed: '4000' }));
    expect(await inner.get(CHANNEL_ID)).toMatchObject({ paidCall: CALL });

    const third = `0x${'1d'.repeat(65)}`;
    await storage.updateChannel(CHANNEL_ID, (current) => ({
      ...current!,
      chargedCumulativeAmount: '6000',
      signedMaxClaimable: '6000',
      signature: third,
    }));
    expect(await inner.get(CHANNEL_ID)).not.toHaveProperty('paidCall');
  });

  it('stamps nothing on a voucher recorded without an id', async () => {
    await stamps.record(NEXT_SIGNATURE, undefined, () => sellNext(storage));
    expect(await inner.get(CHANNEL_ID)).not.toHaveProperty('paidCall');
  });

  it('is sold only for the latest voucher, charged in full, under the same id and resource', async () => {
    await stamps.record(NEXT_SIGNATURE, CALL, () => sellNext(storage));
    const channel = await inner.get(CHANNEL_ID);
    const next = payment(NEXT_SIGNATURE, '4000');
    expect(soldFor(channel, next, CALL)).toBe(true);
    expect(soldFor(channel, payment(FIRST_SIGNATURE, '2000'), CALL)).toBe(false);
    expect(soldFor(channel, next, { ...CALL, paymentId: 'pay_another_id_000001' })).toBe(false);
    expect(soldFor(channel, next, { ...CALL, resource: 'GET /v1/all-tickers' })).toBe(false);
    expect(soldFor(undefined, next, CALL)).toBe(false);
    // its charge taken back (the call was not sold after all)
    expect(soldFor({ ...channel!, chargedCumulativeAmount: '2000' }, next, CALL)).toBe(false);
  });
});
