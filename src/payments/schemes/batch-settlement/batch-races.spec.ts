import { jest } from '@jest/globals';
import type { Logger } from '@nestjs/common';
import { x402ResourceServer, type FacilitatorClient } from '@x402/core/server';
import type {
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  VerifyResponse,
} from '@x402/core/types';
import { computeChannelId } from '@x402/evm/batch-settlement/client';
import { InMemoryChannelStorage, type Channel } from '@x402/evm/batch-settlement/server';
import { getAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { acceptBatchPayment } from './batch-acceptance.js';
import { BatchClaims } from './batch-claims.js';
import { REFUND_HOLD_MS } from './idle-refunds.js';
import {
  CHANNEL_STATE_UNAVAILABLE,
  CHANNEL_STATE_UNCERTAIN,
  CUMULATIVE_MISMATCH,
} from './batch-reasons.js';
import { chargeRecorded } from './channel-reservation.js';
import { clearClaiming, markClaiming } from './claim-marks.js';
import { SellerBatchScheme } from './seller-batch-scheme.js';
import { verifiedPayment } from '../../../../test/support/payment-doubles.js';
import { takeBackLateCharge, takeBackPrice, takeBackUncertainCharge } from './batch-take-backs.js';
import { PaidCallStamps } from './paid-calls.js';

const NETWORK = 'eip155:84532';
const CHAIN_ID = 84532;
const USDC = getAddress('0x036cbd53842c5426634e7929541ec2318f3dcf7e');
const PRICE = 1000n;
const DEPOSIT = 10_000_000n;
const DAY_MS = 24 * 60 * 60 * 1000;
const keyOf = (n: number): Hex => `0x${n.toString(16).padStart(64, '0')}`;
const payerAuthorizer = privateKeyToAccount(keyOf(0xb0b));
const receiverAuthorizer = privateKeyToAccount(keyOf(0xd00d));
const receiver = privateKeyToAccount(keyOf(0xc0ffee)).address;
const channelConfig = {
  payer: privateKeyToAccount(keyOf(0xa11ce)).address,
  payerAuthorizer: payerAuthorizer.address,
  receiver,
  receiverAuthorizer: receiverAuthorizer.address,
  token: USDC,
  withdrawDelay: 900,
  salt: keyOf(7),
};
const channelId = computeChannelId(channelConfig, NETWORK);
const requirement: PaymentRequirements = {
  scheme: 'batch-settlement',
  network: NETWORK,
  asset: USDC,
  amount: PRICE.toString(),
  payTo: receiver,
  maxTimeoutSeconds: 60,
  extra: {
    name: 'USDC',
    version: '2',
    receiverAuthorizer: receiverAuthorizer.address,
    withdrawDelay: 900,
  },
};

async function signedVoucher(amount: bigint) {
  const signature = await payerAuthorizer.signTypedData({
    domain: {
      name: 'x402 Batch Settlement',
      version: '1',
      chainId: CHAIN_ID,
      verifyingContract: '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003',
    },
    types: {
      Voucher: [
        { name: 'channelId', type: 'bytes32' },
        { name: 'maxClaimableAmount', type: 'uint128' },
      ],
    },
    primaryType: 'Voucher',
    message: { channelId, maxClaimableAmount: amount },
  });
  return { channelId, maxClaimableAmount: amount.toString(), signature };
}

/** A voucher (or a top-up deposit with its voucher) as the payment guard hands it on. */
async function voucherPayment(amount: bigint, deposit = false): Promise<PaymentPayload> {
  const payload = { type: 'voucher', channelConfig, voucher: await signedVoucher(amount) };
  const presented = {
    x402Version: 2,
    accepted: requirement,
    payload: deposit
      ? {
          ...payload,
          type: 'deposit',
          deposit: {
            amount: DEPOSIT.toString(),
            authorization: {
              erc3009Authorization: {
                validAfter: '0',
                validBefore: '99999999999',
                salt: keyOf(9),
                signature: `0x${'11'.repeat(64)}1b`,
              },
            },
          },
        }
      : payload,
  } as unknown as PaymentPayload;
  return acceptBatchPayment(presented, requirement).payload;
}

/** A facilitator whose chain holds the deposit; its settle (the refund) can be held or refused. */
class FakeFacilitator implements Partial<FacilitatorClient> {
  readonly settled: Record<string, unknown>[] = [];
  gate: Promise<void> | undefined;
  refuse = false;

  verify(): Promise<VerifyResponse> {
    return Promise.resolve({
      isValid: true,
      payer: channelConfig.payer,
      extra: {
        channelId,
        balance: DEPOSIT.toString(),
        totalClaimed: '0',
        withdrawRequestedAt: 0,
        refundNonce: '0',
      },
    });
  }

  async settle(payload: PaymentPayload): Promise<SettleResponse> {
    this.settled.push(payload.payload);
    await this.gate;
    if (this.refuse) {
      return {
        success: false,
        errorReason: 'invalid_batch_settlement_evm_refund_simulation_failed',
        transaction: '',
        network: NETWORK,
      };
    }
    return {
      success: true,
      transaction: `0x${'ab'.repeat(32)}`,
      network: NETWORK,
      payer: channelConfig.payer,
    };
  }
}

/** The SDK's resource server with this seller's scheme, over a fake facilitator and memory storage. */
function seller() {
  const storage = new InMemoryChannelStorage();
  const facilitator = new FakeFacilitator();
  const paidCalls = new PaidCallStamps();
  const scheme = new SellerBatchScheme(
    receiver,
    { storage, receiverAuthorizerSigner: receiverAuthorizer },
    () => false,
    paidCalls,
  );
  const server = new x402ResourceServer(facilitator as unknown as FacilitatorClient);
  server.register(NETWORK, scheme);
  const manager = scheme.createChannelManager(
    facilitator as unknown as FacilitatorClient,
    NETWORK,
    USDC,
  );
  return { storage, facilitator, server, manager, scheme, paidCalls };
}

/** A channel record with one voucher charged (not yet claimed), last used and read `agoMs` ago. */
async function recordedChannel(storage: InMemoryChannelStorage, agoMs: number): Promise<void> {
  const first = await signedVoucher(PRICE);
  const then = Date.now() - agoMs;
  const record: Channel = {
    channelId,
    channelConfig,
    chargedCumulativeAmount: PRICE.toString(),
    signedMaxClaimable: first.maxClaimableAmount,
    signature: first.signature,
    balance: DEPOSIT.toString(),
    totalClaimed: '0',
    withdrawRequestedAt: 0,
    refundNonce: 0,
    onchainSyncedAt: then,
    lastRequestTimestamp: then,
  };
  await storage.updateChannel(channelId, () => record);
}

describe('idle-channel refunds', () => {
  let storage: InMemoryChannelStorage;
  let facilitator: FakeFacilitator;
  let server: x402ResourceServer;
  let claims: BatchClaims;

  beforeEach(async () => {
    const built = seller();
    ({ storage, facilitator, server } = built);
    claims = new BatchClaims(built.manager, storage, { intervalMs: 60_000, threshold: 0n });
    await recordedChannel(storage, DAY_MS + 60_000);
  });

  /** Starts the refund round with the refund transaction held out, and waits until it is out. */
  async function refundHeldOut(): Promise<{ release: () => void; done: Promise<void> }> {
    let release = (): void => undefined;
    facilitator.gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const done = claims.refundIdle();
    while (facilitator.settled.length === 0) await new Promise((r) => setTimeout(r, 5));
    return { release, done };
  }

  it('refuses a voucher as busy while the refund is out, then deletes the refunded channel', async () => {
    const { release, done } = await refundHeldOut();
    const refund = facilitator.settled[0] as { type: string; amount: string };
    expect(refund).toMatchObject({ type: 'refund', amount: (DEPOSIT - PRICE).toString() });

    const next = await voucherPayment(2n * PRICE);
    const verdict = await server.verifyPayment(next, requirement);
    expect(verdict).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_batch_settlement_evm_channel_busy',
    });
    expect((await storage.get(channelId))?.chargedCumulativeAmount).toBe(PRICE.toString());

    release();
    await done;
    expect(await storage.get(channelId)).toBeUndefined();
  });

  it('keeps a channel whose refund failed on hold, taking no voucher until the hold expires', async () => {
    facilitator.refuse = true;
    const { release, done } = await refundHeldOut();
    release();
    await done;

    const kept = await storage.get(channelId);
    expect(kept?.chargedCumulativeAmount).toBe(PRICE.toString());
    expect(kept?.pendingRequest?.expiresAt).toBeGreaterThanOrEqual(
      Date.now() + REFUND_HOLD_MS - 60_000,
    );
    // its on-chain state is read again before a later voucher is checked
    expect(kept?.onchainSyncedAt).toBeUndefined();
    const verdict = await server.verifyPayment(await voucherPayment(2n * PRICE), requirement);
    expect(verdict).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_batch_settlement_evm_channel_busy',
    });

    // the next round does not refund it again while the hold lasts
    await claims.refundIdle();
    expect(facilitator.settled).toHaveLength(1);
  });

  it('gives way to a claim round that comes up between two refunds', async () => {
    const first = await storage.get(channelId);
    const other = `0x${'ee'.repeat(32)}`;
    await storage.updateChannel(other, () =>
      first === undefined ? first : { ...first, channelId: other },
    );
    const refunds = () => facilitator.settled.filter((payload) => payload['type'] === 'refund');
    const { release, done } = await refundHeldOut();
    const round = claims.claimAndSettle().catch(() => undefined);

    release();
    await Promise.all([done, round]);

    expect(refunds()).toHaveLength(1);
    expect(facilitator.settled.map((payload) => payload['type'])).toContain('claim');
    // the rest at the next tick
    await claims.refundIdle();
    expect(refunds()).toHaveLength(2);
  });

  it('leaves a channel alone when a voucher changed it between the listing and the hold', async () => {
    const listed = storage.list.bind(storage);
    jest.spyOn(storage, 'list').mockImplementationOnce(async () => {
      const channels = await listed();
      // a voucher lands right after the listing
      await storage.updateChannel(channelId, (current) =>
        current === undefined
          ? current
          : { ...current, chargedCumulativeAmount: (2n * PRICE).toString() },
      );
      return channels;
    });

    await claims.refundIdle();

    expect(facilitator.settled).toHaveLength(0);
    expect((await storage.get(channelId))?.chargedCumulativeAmount).toBe((2n * PRICE).toString());
  });
});

describe('a top-up deposit that outlives its channel reservation', () => {
  it('is reported settled by the SDK without its charge, and the voucher sold meanwhile is charged once', async () => {
    const { storage, server } = seller();
    await recordedChannel(storage, 0);
    const deposit = await voucherPayment(2n * PRICE, true);
    expect(await server.verifyPayment(deposit, requirement)).toMatchObject({ isValid: true });
    // the deposit's transaction is slow: its reservation expires before it lands
    await storage.updateChannel(channelId, (current) =>
      current?.pendingRequest === undefined
        ? current
        : { ...current, pendingRequest: { ...current.pendingRequest, expiresAt: Date.now() - 1 } },
    );
    const voucher = await voucherPayment(2n * PRICE);
    expect(await server.verifyPayment(voucher, requirement)).toMatchObject({ isValid: true });
    const sold = await server.settlePayment(voucher, requirement);
    expect(chargeRecorded(sold, (2n * PRICE).toString())).toBe(true);

    const landed = await server.settlePayment(deposit, requirement);

    // success, as the SDK only logs its failed after-settle update: not proof of a charge
    expect(landed.success).toBe(true);
    expect(chargeRecorded(landed, (2n * PRICE).toString())).toBe(false);
    expect((await storage.get(channelId))?.chargedCumulativeAmount).toBe((2n * PRICE).toString());
  });
});

describe("a late settlement's price taken back", () => {
  it('waits for a voucher in flight on the channel, then takes the price off the total it left', async () => {
    const { storage } = seller();
    await recordedChannel(storage, 0);
    // a voucher in flight: reserved on the current total, about to add its price to it
    await storage.updateChannel(channelId, (current) =>
      current === undefined
        ? current
        : {
            ...current,
            chargedCumulativeAmount: (3n * PRICE).toString(),
            pendingRequest: {
              pendingId: 'in-flight',
              signedMaxClaimable: (4n * PRICE).toString(),
              expiresAt: Date.now() + 60_000,
            },
          },
    );
    const taking = takeBackPrice(storage, channelId, PRICE);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await storage.get(channelId))?.chargedCumulativeAmount).toBe((3n * PRICE).toString());

    // the voucher commits what it signed and lets go of the channel
    await storage.updateChannel(channelId, (current) =>
      current === undefined
        ? current
        : {
            ...current,
            chargedCumulativeAmount: (4n * PRICE).toString(),
            pendingRequest: undefined,
          },
    );

    await expect(taking).resolves.toBe('updated');
    expect((await storage.get(channelId))?.chargedCumulativeAmount).toBe((3n * PRICE).toString());
  });

  it('leaves a price claimed on chain charged, and its call no longer answerable as a lost answer', async () => {
    const { storage } = seller();
    await recordedChannel(storage, 0);
    const paidCall = { paymentId: 'pay_0123456789abcdef', resource: 'r', at: Date.now() };
    await storage.updateChannel(channelId, (current) =>
      current === undefined
        ? current
        : { ...current, totalClaimed: current.chargedCumulativeAmount, paidCall },
    );
    const before = await storage.get(channelId);

    await expect(takeBackPrice(storage, channelId, PRICE)).resolves.toBe('claimed');

    const after = await storage.get(channelId);
    expect(after?.chargedCumulativeAmount).toBe(before?.chargedCumulativeAmount);
    expect(after).not.toHaveProperty('paidCall');
  });

  it("takes nothing back for a 502'd voucher whose reservation, not its charge, is in the record", async () => {
    const { storage } = seller();
    await recordedChannel(storage, 0);
    const voucher = await voucherPayment(2n * PRICE);
    // a reservation (the SDK's, for a voucher the facilitator checked) wrote the voucher's
    // signature; its charge never landed, and it was let go
    const { signature } = (voucher.payload as { voucher: { signature: string } }).voucher;
    await storage.updateChannel(channelId, (current) => ({
      ...current!,
      signature,
      signedMaxClaimable: (2n * PRICE).toString(),
    }));
    const logger = { error: jest.fn(), warn: jest.fn() } as unknown as Logger;

    await takeBackUncertainCharge(
      storage,
      logger,
      verifiedPayment(voucher),
      { channelId, signature, maxClaimableAmount: (2n * PRICE).toString() },
      () => false,
    );

    expect((await storage.get(channelId))?.chargedCumulativeAmount).toBe(PRICE.toString());
  });

  it('waits for a claim round under way, which read the charge with the price in it', async () => {
    const { storage } = seller();
    await recordedChannel(storage, 0);
    let claiming = true;
    const taking = takeBackPrice(storage, channelId, PRICE, { claiming: () => claiming });
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await storage.get(channelId))?.chargedCumulativeAmount).toBe(PRICE.toString());

    // the round claimed the price on chain: it cannot be taken back, the payer is refunded
    await storage.updateChannel(channelId, (current) => ({
      ...current!,
      totalClaimed: current!.chargedCumulativeAmount,
    }));
    claiming = false;
    await expect(taking).resolves.toBe('claimed');
    expect((await storage.get(channelId))?.chargedCumulativeAmount).toBe(PRICE.toString());
  });

  it('waits for a claim round another instance marked in the record, then takes the price back', async () => {
    const { storage } = seller();
    await recordedChannel(storage, 0);
    await markClaiming(storage, channelId, 'round-elsewhere', Date.now());
    const taking = takeBackPrice(storage, channelId, PRICE);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await storage.get(channelId))?.chargedCumulativeAmount).toBe(PRICE.toString());
    // its claim failed: the mark goes, the price comes off
    await clearClaiming(storage, channelId, 'round-elsewhere', Date.now());
    await expect(taking).resolves.toBe('updated');
    expect((await storage.get(channelId))?.chargedCumulativeAmount).toBe('0');
  });
});

describe.each([
  // a record read within the minute: the voucher is checked and charged here, nothing reserved
  { path: 'checked here', agoMs: 0 },
  // an older record: the facilitator checks it and the SDK reserves the channel, then charges
  { path: 'checked by the facilitator', agoMs: 120_000 },
])('a channel storage that fails while a voucher $path is recorded', ({ agoMs }) => {
  /** A voucher verified, ready to be recorded at settlement. */
  async function verifiedVoucher() {
    const built = seller();
    await recordedChannel(built.storage, agoMs);
    const voucher = await voucherPayment(2n * PRICE);
    expect(await built.server.verifyPayment(voucher, requirement)).toMatchObject({ isValid: true });
    expect((await built.storage.get(channelId))?.pendingRequest !== undefined).toBe(agoMs > 0);
    return { ...built, voucher };
  }

  /**
   * The resource server throws its abort; the HTTP layer the app settles through answers it as a
   * refusal with the same reason.
   */
  function refusalOf(server: x402ResourceServer, voucher: PaymentPayload): Promise<unknown> {
    return server.settlePayment(voucher, requirement).then(
      () => undefined,
      (error: unknown) => error,
    );
  }

  it('is state-unavailable when nothing was written: nothing held, the facilitator not asked', async () => {
    const { storage, server, facilitator, voucher } = await verifiedVoucher();
    jest.spyOn(storage, 'updateChannel').mockRejectedValueOnce(new Error('store unavailable'));

    expect(await refusalOf(server, voucher)).toMatchObject({
      errorReason: CHANNEL_STATE_UNAVAILABLE,
    });
    expect(facilitator.settled).toHaveLength(0);
    const record = await storage.get(channelId);
    expect(record?.pendingRequest).toBeUndefined();
    expect(record?.chargedCumulativeAmount).toBe(PRICE.toString());
  });

  it('is state-uncertain when the write landed but its answer was lost', async () => {
    const { storage, server, facilitator, voucher } = await verifiedVoucher();
    const write = storage.updateChannel.bind(storage);
    jest.spyOn(storage, 'updateChannel').mockImplementationOnce(async (id, update) => {
      await write(id, update);
      throw new Error('connection lost before the reply');
    });

    expect(await refusalOf(server, voucher)).toMatchObject({
      errorReason: CHANNEL_STATE_UNCERTAIN,
    });
    expect(facilitator.settled).toHaveLength(0);
    expect((await storage.get(channelId))?.chargedCumulativeAmount).toBe((2n * PRICE).toString());
  });
});

describe('a voucher checked here, charged under a payment-identifier', () => {
  it("carries the call and the request's id in the write that charges it", async () => {
    const { storage, server, scheme, paidCalls } = seller();
    await recordedChannel(storage, 0);
    const voucher = await voucherPayment(2n * PRICE);
    expect(await server.verifyPayment(voucher, requirement)).toMatchObject({ isValid: true });
    const id = scheme.readRequestContext(voucher)?.pendingId;
    expect(id).toBeDefined();
    const call = { paymentId: 'pay_0123456789abcdef', resource: 'GET /v1/ticker/BTC' };

    await paidCalls.record(id, call, () => server.settlePayment(voucher, requirement));

    expect(await storage.get(channelId)).toMatchObject({
      chargedCumulativeAmount: (2n * PRICE).toString(),
      chargedBy: id,
      paidCall: { paymentId: call.paymentId },
    });
  });
});

describe('a voucher presented twice at once', () => {
  it('is checked twice and charged once: the second charge finds the record moved on', async () => {
    const { storage, server, facilitator } = seller();
    await recordedChannel(storage, 0);
    const first = await voucherPayment(2n * PRICE);
    const copy = await voucherPayment(2n * PRICE);
    // both checked against the same record: nothing is reserved before the handler runs
    expect(await server.verifyPayment(first, requirement)).toMatchObject({ isValid: true });
    expect(await server.verifyPayment(copy, requirement)).toMatchObject({ isValid: true });

    const sold = await server.settlePayment(first, requirement);
    expect(chargeRecorded(sold, (2n * PRICE).toString())).toBe(true);
    const refused = await server.settlePayment(copy, requirement).then(
      () => undefined,
      (error: unknown) => error,
    );

    expect(refused).toMatchObject({ errorReason: CUMULATIVE_MISMATCH });
    expect(facilitator.settled).toHaveLength(0);
    expect((await storage.get(channelId))?.chargedCumulativeAmount).toBe((2n * PRICE).toString());
  });
});

describe("a copy of a voucher whose charge fails after the first copy's was sold", () => {
  it('is uncertain, and what is taken back for it is its own charge only: none', async () => {
    const { storage, server, scheme } = seller();
    await recordedChannel(storage, 0);
    const first = await voucherPayment(2n * PRICE);
    const copy = await voucherPayment(2n * PRICE);
    expect(await server.verifyPayment(first, requirement)).toMatchObject({ isValid: true });
    expect(await server.verifyPayment(copy, requirement)).toMatchObject({ isValid: true });
    const copyId = scheme.readRequestContext(copy)?.pendingId;
    expect(
      chargeRecorded(await server.settlePayment(first, requirement), (2n * PRICE).toString()),
    ).toBe(true);

    jest.spyOn(storage, 'updateChannel').mockRejectedValueOnce(new Error('store unavailable'));
    const refused = await server.settlePayment(copy, requirement).then(
      () => undefined,
      (error: unknown) => error,
    );
    // the record moved on past the copy's base: maybe charged, as far as the copy can tell
    expect(refused).toMatchObject({ errorReason: CHANNEL_STATE_UNCERTAIN });

    const logger = { error: jest.fn(), warn: jest.fn() } as unknown as Logger;
    const { signature } = (copy.payload as { voucher: { signature: string } }).voucher;
    await takeBackUncertainCharge(
      storage,
      logger,
      verifiedPayment(copy),
      { channelId, signature, maxClaimableAmount: (2n * PRICE).toString(), chargeId: copyId },
      () => false,
    );
    // the first copy's sale stands
    expect((await storage.get(channelId))?.chargedCumulativeAmount).toBe((2n * PRICE).toString());
  });
});

describe("a take-back of a request's own charge", () => {
  const logger = () => ({ error: jest.fn(), warn: jest.fn() }) as unknown as Logger;

  /** The record charged to 2 × PRICE by request `id` (a locally checked voucher's charge). */
  async function chargedBy(storage: InMemoryChannelStorage, id: string): Promise<string> {
    await recordedChannel(storage, 0);
    const voucher = await signedVoucher(2n * PRICE);
    await storage.updateChannel(channelId, (current) => ({
      ...current!,
      chargedCumulativeAmount: voucher.maxClaimableAmount,
      signedMaxClaimable: voucher.maxClaimableAmount,
      signature: voucher.signature,
      chargedBy: id,
      paidCall: { paymentId: 'pay_0123456789abcdef', resource: 'r', at: Date.now() },
    }));
    return voucher.signature;
  }

  it('takes its price off a charge the next voucher raised meanwhile, after the claim round', async () => {
    const { storage } = seller();
    const signature = await chargedBy(storage, 'mine');
    let claiming = true;
    const payment = verifiedPayment(await voucherPayment(2n * PRICE));
    const taking = takeBackUncertainCharge(
      storage,
      logger(),
      payment,
      { channelId, signature, maxClaimableAmount: (2n * PRICE).toString(), chargeId: 'mine' },
      () => claiming,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    // the stamp went at once: no lost answer is owed for a call answered 502
    expect(await storage.get(channelId)).not.toHaveProperty('paidCall');
    // the buyer's next voucher is charged on top while the round runs
    await storage.updateChannel(channelId, (current) => ({
      ...current!,
      chargedCumulativeAmount: (3n * PRICE).toString(),
      chargedBy: 'next',
    }));
    claiming = false;
    await taking;

    expect((await storage.get(channelId))?.chargedCumulativeAmount).toBe((2n * PRICE).toString());
  });

  it('is run for a late settlement that ended uncertain', async () => {
    const { storage } = seller();
    const signature = await chargedBy(storage, 'mine');
    const payment = verifiedPayment(await voucherPayment(2n * PRICE));

    await takeBackLateCharge(
      storage,
      logger(),
      payment,
      { channelId, signature, maxClaimableAmount: (2n * PRICE).toString(), chargeId: 'mine' },
      Promise.resolve({
        success: false,
        errorReason: CHANNEL_STATE_UNCERTAIN,
        transaction: '',
        network: NETWORK,
      }),
      () => false,
    );

    expect((await storage.get(channelId))?.chargedCumulativeAmount).toBe(PRICE.toString());
  });

  it('leaves a sale alone whose voucher the facilitator checked, when a copy checked here failed', async () => {
    const { storage, server } = seller();
    await recordedChannel(storage, 120_000);
    const first = await voucherPayment(2n * PRICE);
    const copy = await voucherPayment(2n * PRICE);
    // the first is checked by the facilitator and reserves the channel; the copy, on the record
    // the facilitator's check refreshed, here
    expect(await server.verifyPayment(first, requirement)).toMatchObject({ isValid: true });
    expect(await server.verifyPayment(copy, requirement)).toMatchObject({ isValid: true });
    expect(
      chargeRecorded(await server.settlePayment(first, requirement), (2n * PRICE).toString()),
    ).toBe(true);
    const sold = await storage.get(channelId);
    expect(sold?.pendingRequest).toBeUndefined();
    expect(typeof (sold as { chargedBy?: unknown }).chargedBy).toBe('string');

    const { signature } = (copy.payload as { voucher: { signature: string } }).voucher;
    await takeBackUncertainCharge(
      storage,
      logger(),
      verifiedPayment(copy),
      { channelId, signature, maxClaimableAmount: (2n * PRICE).toString(), chargeId: 'copy' },
      () => false,
    );
    expect((await storage.get(channelId))?.chargedCumulativeAmount).toBe((2n * PRICE).toString());
  });
});
