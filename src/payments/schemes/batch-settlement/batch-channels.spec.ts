import { computeChannelId } from '@x402/evm/batch-settlement/client';
import { InMemoryChannelStorage, type Channel } from '@x402/evm/batch-settlement/server';
import { CHANNEL_CONFIG } from '../../../../test/support/payment-doubles.js';
import { StartupError } from '../../../common/startup-error.js';
import { ChannelStores } from '../../channels/channel-storage.js';
import type { NetworkFacilitators } from '../../facilitator/network-facilitators.js';
import type { PaymentConfig } from '../../payments.settings.js';
import type { UsdPrice } from '../../paywall/paid-price.js';
import { BatchChannels } from './batch-channels.js';
import type { BatchSettlementConfig } from './batch-settlement.settings.js';

const BASE_SEPOLIA = 'eip155:84532';
const BASE = 'eip155:8453';

function channelOn(network: string): Channel {
  return {
    channelId: computeChannelId(CHANNEL_CONFIG, network),
    channelConfig: CHANNEL_CONFIG,
    chargedCumulativeAmount: '2000',
    signedMaxClaimable: '2000',
    signature: `0x${'11'.repeat(65)}`,
    balance: '100000',
    totalClaimed: '0',
    withdrawRequestedAt: 0,
    refundNonce: 0,
    lastRequestTimestamp: 0,
  };
}

function batchConfig(minDeposit?: UsdPrice): BatchSettlementConfig {
  return {
    settleIntervalMs: 60_000,
    claimThreshold: 0n,
    dataDir: '',
    authorizerPrivateKey: undefined,
    minDeposit,
  };
}

/** Boots with `channel` in the first network's store; `networks`: X402_NETWORKS, in order. */
async function bootWith(channel: Channel, networks: string[] = [BASE_SEPOLIA]): Promise<void> {
  const storage = new InMemoryChannelStorage();
  await storage.updateChannel(channel.channelId, () => channel);
  const payments = {
    networks: networks.map((network) => ({ network })),
  } as unknown as PaymentConfig;
  const stores = new Map(networks.map((network) => [network, new InMemoryChannelStorage()]));
  stores.set(networks[0]!, storage);
  const channels = new BatchChannels(
    payments,
    {} as NetworkFacilitators,
    new ChannelStores(stores),
    batchConfig(),
  );
  await channels.onApplicationBootstrap();
}

describe('BatchChannels at start-up', () => {
  it("starts when each network's store holds its own channels", async () => {
    await expect(bootWith(channelOn(BASE_SEPOLIA))).resolves.toBeUndefined();
  });

  it("refuses to start when a store holds another configured network's channel: X402_NETWORKS reordered", async () => {
    const foreign = channelOn(BASE_SEPOLIA);
    const failure = bootWith(foreign, [BASE, BASE_SEPOLIA]);
    await expect(failure).rejects.toThrow(StartupError);
    await expect(bootWith(foreign, [BASE, BASE_SEPOLIA])).rejects.toThrow(
      `channel store of ${BASE} holds channel ${foreign.channelId}, which is not a channel on ` +
        `${BASE} but on ${BASE_SEPOLIA}: X402_NETWORKS was reordered. The first network keeps ` +
        `the unsuffixed store (Redis prefix, X402_BATCH_DATA_DIR): put ${BASE_SEPOLIA} first again.`,
    );
  });

  it('refuses to start when a store holds a channel of no configured network: another deployment or a reset chain', async () => {
    const foreign = channelOn(BASE);
    const failure = await bootWith(foreign).then(
      () => new Error('started'),
      (error: unknown) => error as Error,
    );
    expect(failure).toBeInstanceOf(StartupError);
    expect(failure.message).toBe(
      `Cannot start: the batch-settlement channel store of ${BASE_SEPOLIA} holds channel ` +
        `${foreign.channelId}, which is not a channel on ${BASE_SEPOLIA} nor on any network ` +
        'X402_NETWORKS lists: the store belongs to another deployment or to a chain that was ' +
        "reset. Point X402_BATCH_DATA_DIR (or REDIS_URL) at this deployment's own store; a store " +
        'of a throw-away test chain can be deleted.',
    );
    expect(failure.message).not.toContain('reordered');
  });
});

describe("the batch offer's minimum deposit (extra.minDeposit)", () => {
  const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
  const AUTHORIZER = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
  const USDC_6 = { address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', decimals: 6 };

  /** The 402 requirement the SDK builds for a route of `amount` atomic units on Base Sepolia. */
  async function offeredExtra(
    minDeposit: UsdPrice | undefined,
    prices: readonly UsdPrice[],
    amount: string,
  ): Promise<Record<string, unknown>> {
    const payments = {
      payTo: PAY_TO,
      networks: [{ network: BASE_SEPOLIA, asset: USDC_6 }],
    } as unknown as PaymentConfig;
    const channels = new BatchChannels(
      payments,
      {} as NetworkFacilitators,
      new ChannelStores(new Map([[BASE_SEPOLIA, new InMemoryChannelStorage()]])),
      batchConfig(minDeposit),
    );
    channels.sizeDeposits(prices);
    const offered = await channels.scheme(BASE_SEPOLIA).enhancePaymentRequirements(
      {
        scheme: 'batch-settlement',
        network: BASE_SEPOLIA,
        asset: USDC_6.address,
        amount,
        payTo: PAY_TO,
        maxTimeoutSeconds: 60,
        extra: { name: 'USDC', version: '2' },
      },
      {
        x402Version: 2,
        scheme: 'batch-settlement',
        network: BASE_SEPOLIA,
        extra: { receiverAuthorizer: AUTHORIZER },
      },
      [],
    );
    return offered.extra;
  }

  it('asks for 500 calls of the cheapest paid route on every route, whatever its price', async () => {
    const prices: UsdPrice[] = ['$0.005', '$0.002', '$0.010'];
    expect(await offeredExtra(undefined, prices, '2000')).toEqual({
      name: 'USDC',
      version: '2',
      receiverAuthorizer: AUTHORIZER,
      withdrawDelay: 900,
      minDeposit: '1000000',
    });
    expect((await offeredExtra(undefined, prices, '10000'))['minDeposit']).toBe('1000000');
  });

  it('asks for no more than the official client deposits by default (USD 5: 5 x its USD 1 cap)', async () => {
    expect((await offeredExtra(undefined, ['$0.05', '$0.2'], '50000'))['minDeposit']).toBe(
      '5000000',
    );
  });

  it('asks for X402_BATCH_MIN_DEPOSIT when set, and at least one call of the route', async () => {
    expect((await offeredExtra('$0.25', ['$0.002'], '2000'))['minDeposit']).toBe('250000');
    expect((await offeredExtra('$0.001', ['$0.002'], '2000'))['minDeposit']).toBe('2000');
  });

  it("refuses to start when X402_BATCH_MIN_DEPOSIT is finer than the network's token", () => {
    const payments = {
      payTo: PAY_TO,
      networks: [{ network: BASE_SEPOLIA, asset: { ...USDC_6, decimals: 2 } }],
    } as unknown as PaymentConfig;
    const channels = new BatchChannels(
      payments,
      {} as NetworkFacilitators,
      new ChannelStores(new Map([[BASE_SEPOLIA, new InMemoryChannelStorage()]])),
      batchConfig('$0.125'),
    );
    expect(() => {
      channels.sizeDeposits(['$0.01']);
    }).toThrow(StartupError);
    expect(() => {
      channels.sizeDeposits(['$0.01']);
    }).toThrow(
      'Cannot offer batch-settlement on eip155:84532: its deposit (X402_BATCH_MIN_DEPOSIT) is no ' +
        'amount of its token: $0.125 has more decimals than the payment token (2)',
    );
  });
});
