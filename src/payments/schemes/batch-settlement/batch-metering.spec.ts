import { jest } from '@jest/globals';
import type { PaymentPayload, PaymentRequirements, VerifyResponse } from '@x402/core/types';
import { computeChannelId } from '@x402/evm/batch-settlement/client';
import { InMemoryChannelStorage, type Channel } from '@x402/evm/batch-settlement/server';
import { getAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { NetworkFacilitators } from '../../facilitator/network-facilitators.js';
import { InMemoryPaymentLedger } from '../../ledger/payment-ledger.js';
import type { MeteredAccount } from '../../paywall/metered-sale.js';
import type { SaleContext } from '../../paywall/seller-scheme.js';
import { BatchChannels } from './batch-channels.js';
import { BatchMetering, CHAIN_STATE_TTL_MS } from './batch-metering.js';
import { CHANNEL_SET_ASIDE, WITHDRAWAL_PENDING } from './batch-reasons.js';

const NETWORK = 'eip155:84532';
const USDC = getAddress('0x036cbd53842c5426634e7929541ec2318f3dcf7e');
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
const BUDGET = 500n;
const requirement: PaymentRequirements = {
  scheme: 'batch-settlement',
  network: NETWORK,
  asset: USDC,
  amount: BUDGET.toString(),
  payTo: receiver,
  maxTimeoutSeconds: 60,
  extra: {
    name: 'USDC',
    version: '2',
    receiverAuthorizer: receiverAuthorizer.address,
    withdrawDelay: 900,
  },
};

async function voucherPayment(max: bigint): Promise<PaymentPayload> {
  const signature = await payerAuthorizer.signTypedData({
    domain: {
      name: 'x402 Batch Settlement',
      version: '1',
      chainId: 84532,
      verifyingContract: '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003',
    },
    types: {
      Voucher: [
        { name: 'channelId', type: 'bytes32' },
        { name: 'maxClaimableAmount', type: 'uint128' },
      ],
    },
    primaryType: 'Voucher',
    message: { channelId, maxClaimableAmount: max },
  });
  return {
    x402Version: 2,
    accepted: requirement,
    payload: {
      type: 'voucher',
      channelConfig,
      voucher: { channelId, maxClaimableAmount: max.toString(), signature },
    },
  };
}

/** A facilitator whose chain reads answer `verdict` (or fail with `outage`), counting them. */
class ChainReads {
  verdict: VerifyResponse = { isValid: true, payer: channelConfig.payer };
  outage = false;
  reads = 0;
  verify(): Promise<VerifyResponse> {
    this.reads += 1;
    if (this.outage) return Promise.reject(new Error('ECONNREFUSED'));
    return Promise.resolve(this.verdict);
  }
}

describe('BatchMetering: a stream’s channel against the chain', () => {
  let storage: InMemoryChannelStorage;
  let chain: ChainReads;
  let setAside: Set<string>;
  let metering: BatchMetering;
  let account: MeteredAccount | undefined;
  let fresh: Channel;

  beforeEach(async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    storage = new InMemoryChannelStorage();
    const record: Channel = {
      channelId,
      channelConfig,
      chargedCumulativeAmount: '2000',
      signedMaxClaimable: '2000',
      signature: '0x',
      balance: '100000',
      totalClaimed: '2000',
      withdrawRequestedAt: 0,
      refundNonce: 0,
      lastRequestTimestamp: 0,
      onchainSyncedAt: Date.now(),
    };
    await storage.updateChannel(channelId, () => record);
    fresh = record;
    chain = new ChainReads();
    setAside = new Set();
    const channels = {
      channels: () => storage,
      setAsideOn: () => (id: string) => setAside.has(id),
    } as unknown as BatchChannels;
    const facilitators = { of: () => chain } as unknown as NetworkFacilitators;
    metering = new BatchMetering(channels, facilitators, new InMemoryPaymentLedger());
  });
  afterEach(() => {
    account?.end();
    account = undefined;
    jest.useRealTimers();
  });

  const open = async (): Promise<MeteredAccount> => {
    const payload = await voucherPayment(2000n + BUDGET);
    account = await metering.openMetered(
      { payload, version: 2, requirement },
      { label: 'stream' } as SaleContext,
      '100',
    );
    return account;
  };
  // the record's state passed its TTL by the second background check
  const afterTtl = () => jest.advanceTimersByTimeAsync(CHAIN_STATE_TTL_MS * 1.5 + 1);

  it('takes a voucher as a cover once, ever: presented again after its record was deleted and rebuilt (an idle refund, a new deposit), it is refused before any chain read', async () => {
    const stream = await open();
    stream.end();
    await storage.updateChannel(channelId, () => undefined);
    await storage.updateChannel(channelId, () => fresh);
    await expect(open()).rejects.toThrow(/^stream_voucher_spent: this voucher already covered/);
    expect(chain.reads).toBe(0);
  });

  it('reads the chain again while a stream is open; a withdrawal the payer started ends its charges', async () => {
    const stream = await open();
    expect(await stream.charge()).toMatchObject({ kind: 'charged', cumulative: '2100' });
    chain.verdict = {
      isValid: true,
      payer: channelConfig.payer,
      extra: { balance: '100000', totalClaimed: '2000', withdrawRequestedAt: 1234 },
    };
    await afterTtl();
    expect(chain.reads).toBe(1);
    expect(await stream.charge()).toEqual({ kind: 'refused', reason: WITHDRAWAL_PENDING });
    expect((await storage.get(channelId))?.chargedCumulativeAmount).toBe('2100');
  });

  it('refuses every charge after the chain refused the voucher', async () => {
    const stream = await open();
    chain.verdict = { isValid: false, invalidReason: 'invalid_batch_settlement_evm_channel_gone' };
    await afterTtl();
    expect(await stream.charge()).toEqual({
      kind: 'refused',
      reason: 'invalid_batch_settlement_evm_channel_gone',
    });
  });

  it('goes on charging when the chain cannot be read, and stops reading once the stream ends', async () => {
    const stream = await open();
    chain.outage = true;
    await afterTtl();
    expect(chain.reads).toBe(1);
    expect(await stream.charge()).toMatchObject({ kind: 'charged' });
    stream.end();
    await afterTtl();
    expect(chain.reads).toBe(1);
  });

  it('charges nothing on a channel claims set aside, and opens no stream on one', async () => {
    const stream = await open();
    setAside.add(channelId);
    expect(await stream.charge()).toEqual({ kind: 'refused', reason: CHANNEL_SET_ASIDE });
    stream.end();
    await expect(open()).rejects.toThrow(CHANNEL_SET_ASIDE);
    expect((await storage.get(channelId))?.chargedCumulativeAmount).toBe('2000');
  });

  it('checks the chain at open when the record’s state is old', async () => {
    await storage.updateChannel(channelId, (c) =>
      c === undefined ? c : { ...c, onchainSyncedAt: 0 },
    );
    chain.verdict = {
      isValid: false,
      invalidReason: 'invalid_batch_settlement_evm_withdrawal_pending',
    };
    await expect(open()).rejects.toThrow(/withdrawal_pending/);
    expect(chain.reads).toBe(1);
  });
});
