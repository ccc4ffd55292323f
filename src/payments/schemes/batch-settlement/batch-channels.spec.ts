import { computeChannelId } from '@x402/evm/batch-settlement/client';
import { InMemoryChannelStorage, type Channel } from '@x402/evm/batch-settlement/server';
import { CHANNEL_CONFIG } from '../../../../test/support/payment-doubles.js';
import { StartupError } from '../../../common/startup-error.js';
import { ChannelStores } from '../../channels/channel-storage.js';
import type { NetworkFacilitators } from '../../facilitator/network-facilitators.js';
import type { PaymentConfig } from '../../payments.settings.js';
import { BatchChannels } from './batch-channels.js';

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
    { settleIntervalMs: 60_000, claimThreshold: 0n, dataDir: '', authorizerPrivateKey: undefined },
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
