import {
  RedisScript,
  sharedStateUnavailable,
  type RedisClient,
} from '../shared-state/redis-connection.js';
import type {
  ClaimResult,
  PaymentIdBinding,
  PaymentIdClaim,
  PaymentLedger,
  StoredResponse,
} from './payment-ledger.js';
import { withDeadline } from './payment-settler.js';

/**
 * The longest one ledger step may wait for Redis. A paused or unreachable server otherwise holds
 * a request forever, even one whose price has already moved (its 200 or 502 must go out).
 */
const COMMAND_DEADLINE_MS = 2000;

const PAYMENT_KEY = 'x402:ledger:payment:';
const PAYMENT_ID_KEY = 'x402:ledger:payment-id:';

// A payment: one string key, its state, expiring with the payment (PXAT). Claiming is SET NX.
const CLAIM = new RedisScript(`
if redis.call('SET', KEYS[1], 'in_flight', 'NX', 'PXAT', ARGV[1]) then return 'claimed' end
return redis.call('GET', KEYS[1])`);

const RELEASE = new RedisScript(`
if redis.call('GET', KEYS[1]) == 'in_flight' then redis.call('DEL', KEYS[1]) end
return 0`);

// A payment-identifier: one hash (fp, sig, res, and once known response or uncertain).
const CLAIM_ID = new RedisScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'sig', ARGV[2], 'res', ARGV[3])
  redis.call('PEXPIREAT', KEYS[1], ARGV[4])
  return {'claimed'}
end
local e = redis.call('HMGET', KEYS[1], 'fp', 'sig', 'res', 'response', 'uncertain')
if e[1] ~= ARGV[1] or e[2] ~= ARGV[2] or e[3] ~= ARGV[3] then return {'conflict'} end
if e[4] then return {'stored', e[4]} end
if e[5] == '1' then return {'uncertain'} end
return {'in_flight'}`);

const RELEASE_ID = new RedisScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  local e = redis.call('HMGET', KEYS[1], 'response', 'uncertain')
  if not e[1] and e[2] ~= '1' then redis.call('DEL', KEYS[1]) end
end
return 0`);

const MARK_ID_UNCERTAIN = new RedisScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'uncertain', '1') end
return 0`);

const RESOLVE_NEVER_SETTLED = new RedisScript(`
if redis.call('GET', KEYS[1]) == 'uncertain' then redis.call('DEL', KEYS[1]) end
if KEYS[2] then
  local e = redis.call('HMGET', KEYS[2], 'fp', 'uncertain')
  if e[1] == ARGV[1] and e[2] == '1' then redis.call('DEL', KEYS[2]) end
end
return 0`);

const STORE_RESPONSE = new RedisScript(`
if redis.call('HGET', KEYS[1], 'fp') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'response', ARGV[2], 'uncertain', '0')
  redis.call('PEXPIREAT', KEYS[1], ARGV[3])
end
return 0`);

/**
 * The payment ledger shared by every instance through Redis. Every step that reads and then
 * writes is one Lua script, so it is atomic across instances exactly as the in-memory ledger is
 * within one process; every key expires (PEXPIREAT) when its payment could no longer settle or
 * its stored response is no longer served, so Redis memory stays bounded the same way. Redis
 * unreachable: every operation fails with the 503 `shared_state_unavailable`, so a paid route
 * never answers without the shared ledger.
 */
export class RedisPaymentLedger implements PaymentLedger {
  constructor(
    private readonly redis: RedisClient,
    private readonly deadlineMs = COMMAND_DEADLINE_MS,
  ) {}

  async claim(fingerprint: string, expiresAt: number): Promise<ClaimResult> {
    const result = await this.run(CLAIM, [PAYMENT_KEY + fingerprint], [at(expiresAt)]);
    return result as ClaimResult;
  }

  async release(fingerprint: string): Promise<void> {
    await this.run(RELEASE, [PAYMENT_KEY + fingerprint], []);
  }

  settle(fingerprint: string, expiresAt: number): Promise<void> {
    return this.setState(fingerprint, 'settled', expiresAt);
  }

  markUncertain(fingerprint: string, expiresAt: number): Promise<void> {
    return this.setState(fingerprint, 'uncertain', expiresAt);
  }

  async claimPaymentId(
    id: string,
    binding: PaymentIdBinding,
    expiresAt: number,
  ): Promise<PaymentIdClaim> {
    const [kind, response] = (await this.run(
      CLAIM_ID,
      [PAYMENT_ID_KEY + id],
      [binding.fingerprint, binding.signatureDigest, binding.resource, at(expiresAt)],
    )) as [Exclude<PaymentIdClaim['kind'], 'stored'> | 'stored', string | undefined];
    if (kind === 'stored') {
      return { kind, response: JSON.parse(response ?? 'null') as StoredResponse };
    }
    return { kind };
  }

  async releasePaymentId(id: string): Promise<void> {
    await this.run(RELEASE_ID, [PAYMENT_ID_KEY + id], []);
  }

  async markPaymentIdUncertain(id: string): Promise<void> {
    await this.run(MARK_ID_UNCERTAIN, [PAYMENT_ID_KEY + id], []);
  }

  async resolveNeverSettled(fingerprint: string, paymentId: string | undefined): Promise<void> {
    const keys = [PAYMENT_KEY + fingerprint];
    if (paymentId !== undefined) keys.push(PAYMENT_ID_KEY + paymentId);
    await this.run(RESOLVE_NEVER_SETTLED, keys, [fingerprint]);
  }

  async storeResponse(
    id: string,
    fingerprint: string,
    response: StoredResponse,
    expiresAt: number,
  ): Promise<void> {
    await this.run(
      STORE_RESPONSE,
      [PAYMENT_ID_KEY + id],
      [fingerprint, JSON.stringify(response), at(expiresAt)],
    );
  }

  private async setState(fingerprint: string, state: string, expiresAt: number): Promise<void> {
    await this.bounded(
      this.redis.sendCommand(['SET', PAYMENT_KEY + fingerprint, state, 'PXAT', at(expiresAt)]),
    );
  }

  private run(script: RedisScript, keys: string[], args: string[]): Promise<unknown> {
    return this.bounded(script.run(this.redis, keys, args));
  }

  /** Redis's answer within the deadline, else 503 shared_state_unavailable. */
  private async bounded<T>(command: Promise<T>): Promise<T> {
    let result: T | symbol;
    try {
      result = await withDeadline(command, this.deadlineMs);
    } catch (error) {
      throw sharedStateUnavailable(error);
    }
    if (typeof result === 'symbol') {
      throw sharedStateUnavailable(new Error(`no answer within ${this.deadlineMs} ms`));
    }
    return result;
  }
}

/** An absolute expiry for PXAT/PEXPIREAT: whole milliseconds, at least 1 (0 is refused). */
function at(expiresAt: number): string {
  return String(Math.max(1, Math.floor(expiresAt)));
}
