/**
 * Suites against the shared (Redis) stores. Without redis-server on PATH they skip with a loud
 * message naming the package; with REQUIRE_REDIS=1 (set by .ci/run) they fail instead, so CI can
 * never pass by skipping. Test-only: excluded from the build (tsconfig.build.json).
 */
import { describe, it } from '@jest/globals';
import { redisServerAvailable } from './redis-server.js';

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
