import path from 'node:path';
import type { Provider } from '@nestjs/common';
import type { ChannelStorage } from '@x402/evm/batch-settlement/server';
import { StartupError } from '../../common/startup-error.js';
import { REDIS_CLIENT, type RedisClient } from '../../shared-state/redis-connection.js';
import { reasonOf } from '../facilitator/facilitator-client.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../payments.settings.js';
import {
  BATCH_SETTLEMENT_SETTINGS,
  type BatchSettlementConfig,
} from '../schemes/batch-settlement/batch-settlement.settings.js';
import { LocalChannelStorage } from './local-channel-storage.js';
import { ComparingRedisChannelStorage } from './redis-channel-storage.js';

/**
 * Where batch-settlement channel state lives, behind one token, one store per network (a channel
 * record does not name its chain, and each network's claims list only its own): Redis with
 * REDIS_URL (atomic per channel across instances), else this process's data directory
 * (LocalChannelStorage). Never only in memory: a lost voucher is lost revenue. The first network
 * keeps the unsuffixed key prefix and directory; another adds its CAIP-2 id. Null when batch
 * settlement is not offered.
 */
export const CHANNEL_STORAGE = Symbol('ChannelStorage');

/** Each network's channel store. */
export class ChannelStores {
  constructor(private readonly byNetwork: ReadonlyMap<string, ChannelStorage>) {}

  of(network: string): ChannelStorage {
    const storage = this.byNetwork.get(network);
    if (storage === undefined) throw new Error(`no channel storage for ${network}`);
    return storage;
  }

  all(): ChannelStorage[] {
    return [...this.byNetwork.values()];
  }
}

export const channelStorageProvider: Provider = {
  provide: CHANNEL_STORAGE,
  inject: [PAYMENT_SETTINGS.token, BATCH_SETTLEMENT_SETTINGS.token, REDIS_CLIENT],
  useFactory: (
    payments: PaymentConfig,
    batch: BatchSettlementConfig,
    redis: RedisClient | null,
  ): ChannelStores | null => {
    if (!payments.schemes.includes('batch-settlement')) return null;
    return new ChannelStores(
      new Map(
        payments.networks.map(({ network }, index) => [
          network,
          channelStorage(batch, redis, index === 0 ? undefined : network),
        ]),
      ),
    );
  },
};

function channelStorage(
  batch: BatchSettlementConfig,
  redis: RedisClient | null,
  network: string | undefined,
): ChannelStorage {
  if (redis !== null) {
    const prefix = 'x402-price-api:batch-settlement';
    return new ComparingRedisChannelStorage(
      redis,
      network === undefined ? prefix : `${prefix}:${network}`,
    );
  }
  const dataDir =
    network === undefined
      ? batch.dataDir
      : path.join(batch.dataDir, 'networks', network.replace(':', '-'));
  try {
    return new LocalChannelStorage(dataDir);
  } catch (error) {
    throw new StartupError(
      `Cannot start: the batch-settlement channels in X402_BATCH_DATA_DIR (${dataDir}) ` +
        `cannot be used: ${reasonOf(error)}`,
      { cause: error },
    );
  }
}
