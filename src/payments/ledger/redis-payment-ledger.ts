import { ApiError } from '../../common/api-error.js';
import {
  REDIS_COMMAND_DEADLINE_MS,
  RedisScript,
  sharedStateUnavailable,
  withinDeadline,
  type RedisClient,
} from '../../shared-state/redis-connection.js';
import type {
  UncertainSaleRecord,
  ClaimResult,
  PaymentIdBinding,
  PaymentIdClaim,
  PaymentLedger,
  StoredResponse,
} from './payment-ledger.js';

const PAYMENT_KEY = 'x402:ledger:payment:';
const PAYMENT_ID_KEY = 'x402:ledger:payment-id:';
/** An uncertain sale (JSON), expiring with its payment. */
const UNCERTAIN_SALE_KEY = 'x402:ledger:uncertain:';
/** The fingerprints of the uncertain sales, scored by their expiry: what reconcilers look through. */
const UNCERTAIN_INDEX_KEY = 'x402:ledger:uncertain-index';

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

// KEYS: payment, sale, index[, payment-id]; ARGV: fingerprint, expiry, sale JSON.
// A payment already settled is left as it is ('resolved'); the id is marked only if bound to it.
const MARK_UNCERTAIN = new RedisScript(`
if redis.call('GET', KEYS[1]) == 'settled' then return 'resolved' end
redis.call('SET', KEYS[1], 'uncertain', 'PXAT', ARGV[2])
redis.call('SET', KEYS[2], ARGV[3], 'PXAT', ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[3], last[2])
if KEYS[4] and redis.call('HGET', KEYS[4], 'fp') == ARGV[1] then
  redis.call('HSET', KEYS[4], 'uncertain', '1')
end
return 'recorded'`);

// KEYS: index; ARGV: now, sale key prefix. The live sales' JSON; expired ones leave the index.
const UNCERTAIN_SALES = new RedisScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local sales = {}
for _, fingerprint in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local sale = redis.call('GET', ARGV[2] .. fingerprint)
  if sale then table.insert(sales, sale) end
end
return sales`);

// KEYS: payment, sale, index; ARGV: fingerprint, expiry. 0 if it was already settled.
const RESOLVE_SETTLED = new RedisScript(`
local first = redis.call('GET', KEYS[1]) ~= 'settled'
redis.call('SET', KEYS[1], 'settled', 'PXAT', ARGV[2])
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[1])
if first then return 1 end
return 0`);

// KEYS: payment, sale, index[, payment-id]; ARGV: fingerprint
const RESOLVE_NEVER_SETTLED = new RedisScript(`
if redis.call('GET', KEYS[1]) == 'uncertain' then redis.call('DEL', KEYS[1]) end
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[1])
if KEYS[4] then
  local e = redis.call('HMGET', KEYS[4], 'fp', 'uncertain')
  if e[1] == ARGV[1] and e[2] == '1' then redis.call('DEL', KEYS[4]) end
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
    /** A paused server must not hold a request whose price has moved: its 200 or 502 goes out. */
    private readonly deadlineMs = REDIS_COMMAND_DEADLINE_MS,
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

  async markUncertain(sale: UncertainSaleRecord): Promise<'recorded' | 'resolved'> {
    const keys = saleKeys(sale.fingerprint);
    if (sale.paymentId !== undefined) keys.push(PAYMENT_ID_KEY + sale.paymentId);
    return (await this.run(MARK_UNCERTAIN, keys, [
      sale.fingerprint,
      at(sale.expiresAt),
      JSON.stringify(sale),
    ])) as 'recorded' | 'resolved';
  }

  async uncertainSales(): Promise<UncertainSaleRecord[]> {
    const sales = (await this.run(
      UNCERTAIN_SALES,
      [UNCERTAIN_INDEX_KEY],
      [String(Date.now()), UNCERTAIN_SALE_KEY],
    )) as string[];
    return sales.map((sale) => JSON.parse(sale) as UncertainSaleRecord);
  }

  async resolveSettled(fingerprint: string, expiresAt: number): Promise<boolean> {
    return (
      (await this.run(RESOLVE_SETTLED, saleKeys(fingerprint), [fingerprint, at(expiresAt)])) === 1
    );
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

  async hasStoredResponse(id: string): Promise<boolean> {
    const exists = await this.bounded(
      this.redis.sendCommand(['HEXISTS', PAYMENT_ID_KEY + id, 'response']),
    );
    return Number(exists) === 1;
  }

  async resolveNeverSettled(fingerprint: string, paymentId: string | undefined): Promise<void> {
    const keys = saleKeys(fingerprint);
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
    return this.bounded(script.run(this.redis, keys, args, this.deadlineMs));
  }

  /** Redis's answer within the deadline; else, or on any failure, 503 shared_state_unavailable. */
  private async bounded<T>(command: Promise<T>): Promise<T> {
    try {
      return await withinDeadline(command, this.deadlineMs);
    } catch (error) {
      throw error instanceof ApiError ? error : sharedStateUnavailable(error);
    }
  }
}

/** The keys an uncertain sale lives under: its payment's state, the sale, and the index. */
function saleKeys(fingerprint: string): string[] {
  return [PAYMENT_KEY + fingerprint, UNCERTAIN_SALE_KEY + fingerprint, UNCERTAIN_INDEX_KEY];
}

/** An absolute expiry for PXAT/PEXPIREAT: whole milliseconds, at least 1 (0 is refused). */
function at(expiresAt: number): string {
  return String(Math.max(1, Math.floor(expiresAt)));
}
