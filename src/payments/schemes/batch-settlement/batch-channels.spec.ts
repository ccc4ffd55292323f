import { computeChannelId } from '@x402/evm/batch-settlement/client';
import { InMemoryChannelStorage, type Channel } from '@x402/evm/batch-settlement/server';
import { CHANNEL_CONFIG } from '../../../../test/support/payment-doubles.js';
import { StartupError } from '../../../common/startup-error.js';
import { ChannelStores } from '../../channels/channel-storage.js';
import type { NetworkFacilitators } from '../../facilitator/network-facilitators.js';
import type { PaymentConfig } from '../../payments.settings.js';
import { BatchChannels } from './batch-channels.js';

const BASE_SEPOLIA = 'eip155:84532';

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

async function bootWith(channel: Channel): Promise<void> {
  const storage = new InMemoryChannelStorage();
  await storage.updateChannel(channel.channelId, () => channel);
  const payments = { networks: [{ network: BASE_SEPOLIA }] } as unknown as PaymentConfig;
  const channels = new BatchChannels(
    payments,
    {} as NetworkFacilitators,
    new ChannelStores(new Map([[BASE_SEPOLIA, storage]])),
    { settleIntervalMs: 60_000, claimThreshold: 0n, dataDir: '', authorizerPrivateKey: undefined },
  );
  await channels.onApplicationBootstrap();
}

describe('BatchChannels at start-up', () => {
  it("starts when each network's store holds its own channels", async () => {
    await expect(bootWith(channelOn(BASE_SEPOLIA))).resolves.toBeUndefined();
  });

  it("refuses to start when a store holds another network's channel (X402_NETWORKS reordered)", async () => {
    const foreign = channelOn('eip155:8453');
    await expect(bootWith(foreign)).rejects.toThrow(StartupError);
    await expect(bootWith(foreign)).rejects.toThrow(
      `channel store of ${BASE_SEPOLIA} holds channel ${foreign.channelId}, which is not a channel on ${BASE_SEPOLIA}`,
    );
  });
});
