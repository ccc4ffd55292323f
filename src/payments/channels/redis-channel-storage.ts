import type { Channel } from '@x402/evm/batch-settlement/server';
import { RedisChannelStorage } from '@x402/evm/batch-settlement/server/redis-storage';
import type { RedisClient } from '../../shared-state/redis-connection.js';

/** Writes ARGV[2] only if the key still holds exactly ARGV[1]. */
const REPLACE_IF_UNCHANGED = `
if redis.call("GET", KEYS[1]) ~= ARGV[1] then return 0 end
redis.call("SET", KEYS[1], ARGV[2])
return 1
`;

/**
 * The SDK's Redis channel store (records as JSON under `<prefix>:server:channel:<id>`, updates
 * as a read then a compare-and-set script: two round trips, retried on a race) plus one
 * compare-and-set against a record already read: a voucher checked against the record is charged
 * with one script, one round trip (voucher-charges.ts).
 */
export class ComparingRedisChannelStorage extends RedisChannelStorage {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {
    super({ client: redis, keyPrefix: prefix });
  }

  /**
   * Writes `next` if the record is still `seen` as the SDK wrote it (`JSON.stringify`, which
   * gives back the same text for a record it parsed); false when anything changed it since.
   */
  async replaceIfUnchanged(seen: Channel, next: Channel): Promise<boolean> {
    const applied = await this.redis.eval(REPLACE_IF_UNCHANGED, {
      keys: [`${this.prefix}:server:channel:${seen.channelId.toLowerCase()}`],
      arguments: [JSON.stringify(seen), JSON.stringify(next)],
    });
    return applied === 1;
  }
}
