/**
 * Suites against the shared (Redis) stores. Without redis-server on PATH they skip with a loud
 * message naming the package; with REQUIRE_REDIS=1 (set by .ci/run) they fail instead, so CI can
 * never pass by skipping. Test-only: excluded from the build (tsconfig.build.json).
 */
import { afterAll, beforeAll, describe, it } from '@jest/globals';
import { connectRedis, type RedisClient } from '../../src/shared-state/redis-connection.js';
import { redisServerAvailable, startRedisServer, type RedisServer } from './redis-server.js';

/**
 * `describe` when redis-server is on PATH; otherwise `describe.skip` with a warning, or (under
 * REQUIRE_REDIS=1) a suite that fails saying what is missing.
 */
export function describeWithRedis(name: string, body: () => void): void {
  if (redisServerAvailable()) {
    describe(name, body);
    return;
  }
  const message =
    `redis-server is not on PATH: "${name}" needs it. Install the Debian package ` +
    '"redis-server" (apt-get install -y redis-server).';
  if (process.env.REQUIRE_REDIS === '1') {
    describe(name, () => {
      it('needs redis-server (REQUIRE_REDIS=1)', () => {
        throw new Error(message);
      });
    });
    return;
  }
  console.warn(`\n!!! SKIPPED: ${message}\n`);
  describe.skip(name, body);
}

/** A redis-server of the suite's own and a client connected to it, for the suite's tests. */
export function useRedis(): { readonly server: RedisServer; readonly client: RedisClient } {
  const shared = {} as { server: RedisServer; client: RedisClient };
  beforeAll(async () => {
    shared.server = await startRedisServer();
    shared.client = await connectRedis(shared.server.url);
  });
  afterAll(async () => {
    shared.client.destroy();
    await shared.server.stop();
  });
  return shared;
}
