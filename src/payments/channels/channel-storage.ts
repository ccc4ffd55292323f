import type { Provider } from '@nestjs/common';
import type { ChannelStorage } from '@x402/evm/batch-settlement/server';
import { RedisChannelStorage } from '@x402/evm/batch-settlement/server/redis-storage';
import { StartupError } from '../../common/startup-error.js';
import { REDIS_CLIENT, type RedisClient } from '../../shared-state/redis-connection.js';
import { reasonOf } from '../facilitator/facilitator-client.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../payments.settings.js';
import { LocalChannelStorage } from './local-channel-storage.js';

/**
 * Where batch-settlement channel state lives, behind one token: Redis with REDIS_URL (atomic per
 * channel across instances), else this process's data directory (LocalChannelStorage). Never
 * only in memory: a lost voucher is lost revenue. Null when batch settlement is not offered.
 */
export const CHANNEL_STORAGE = Symbol('ChannelStorage');

export const channelStorageProvider: Provider = {
  provide: CHANNEL_STORAGE,
  inject: [PAYMENT_SETTINGS.token, REDIS_CLIENT],
  useFactory: (payments: PaymentConfig, redis: RedisClient | null): ChannelStorage | null =>
    payments.schemes.includes('batch-settlement') ? channelStorage(payments, redis) : null,
};

function channelStorage(payments: PaymentConfig, redis: RedisClient | null): ChannelStorage {
  if (redis !== null) {
    return new RedisChannelStorage({
      client: redis,
      keyPrefix: 'x402-price-api:batch-settlement',
    });
  }
  try {
    return new LocalChannelStorage(payments.batch.dataDir);
  } catch (error) {
    throw new StartupError(
      `Cannot start: the batch-settlement channels in X402_BATCH_DATA_DIR (${payments.batch.dataDir}) ` +
        `cannot be used: ${reasonOf(error)}`,
      { cause: error },
    );
  }
}
