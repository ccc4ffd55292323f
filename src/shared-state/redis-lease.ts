import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { RedisScript } from './redis-connection.js';

/** Extends a lease key's TTL (ARGV[2] ms) only while ARGV[1] still holds it; 1 if it did. */
export const RENEW_LEASE = new RedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`);

/** Deletes a lease key only while ARGV[1] still holds it. */
export const RELEASE_LEASE = new RedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`);

/** A name for this process as a lease holder: host, pid, and a random part for restarts. */
export function leaseHolder(): string {
  return `${hostname()}:${String(process.pid)}:${randomUUID()}`;
}
