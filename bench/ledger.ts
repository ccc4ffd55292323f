/**
 * What the payment ledger costs per paid request, in memory and in Redis (REDIS_URL): the
 * ledger steps one paid request with a payment-identifier takes (claim the id, claim the
 * payment, record it settled, store the response), against a redis-server started on loopback
 * for the run. Sequential: the latency one request adds; 50 at once: the throughput bound.
 *
 *   npm run bench:ledger   (BENCH_REQUESTS, default 5000)
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import {
  InMemoryPaymentLedger,
  type PaymentLedger,
} from '../src/payments/ledger/payment-ledger.js';
import { RedisPaymentLedger } from '../src/payments/ledger/redis-payment-ledger.js';
import { connectRedis } from '../src/shared-state/redis-connection.js';
import { startRedisServer } from '../test/support/redis-server.js';

const REQUESTS = Number(process.env['BENCH_REQUESTS'] ?? 5000);
const CONCURRENCY = 50;
const RESPONSE = {
  status: 200,
  headers: { 'payment-response': 'x'.repeat(400), 'cache-control': 'private, no-store' },
  body: { timestamp: new Date().toISOString(), currency: 'USD', price: { BTC: 91260.27 } },
};

/** The ledger steps of one paid request with a payment-identifier. */
async function paidRequest(ledger: PaymentLedger): Promise<void> {
  const fingerprint = randomUUID();
  const id = `order_${fingerprint}`;
  const expiresAt = Date.now() + 60_000;
  const binding = { fingerprint, signatureDigest: 'd', resource: 'GET /v1/ticker/BTC' };
  if ((await ledger.claimPaymentId(id, binding, expiresAt)).kind !== 'claimed') throw new Error();
  if ((await ledger.claim(fingerprint, expiresAt)) !== 'claimed') throw new Error();
  await ledger.settle(fingerprint, expiresAt);
  await ledger.storeResponse(id, fingerprint, RESPONSE, Date.now() + 86_400_000);
}

async function measure(
  ledger: PaymentLedger,
): Promise<{ sequentialUs: number; perSecond: number }> {
  for (let index = 0; index < 200; index += 1) await paidRequest(ledger); // first calls, not counted
  let started = process.hrtime.bigint();
  for (let index = 0; index < REQUESTS; index += 1) await paidRequest(ledger);
  const sequentialUs = Number(process.hrtime.bigint() - started) / 1000 / REQUESTS;
  started = process.hrtime.bigint();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        next += 1;
        await paidRequest(ledger);
      }
    }),
  );
  const perSecond = REQUESTS / (Number(process.hrtime.bigint() - started) / 1e9);
  return { sequentialUs, perSecond };
}

async function main(): Promise<void> {
  const server = await startRedisServer();
  const redis = await connectRedis(server.url);
  try {
    const rows = [
      ['in-memory', await measure(new InMemoryPaymentLedger())],
      ['Redis (loopback)', await measure(new RedisPaymentLedger(redis))],
    ] as const;
    console.log(
      `ledger steps of one paid request with a payment-identifier, ${String(REQUESTS)} requests`,
    );
    for (const [name, { sequentialUs, perSecond }] of rows) {
      console.log(
        `${name.padEnd(18)} ${sequentialUs.toFixed(1).padStart(8)} µs per request sequentially, ` +
          `${Math.round(perSecond).toString().padStart(7)} requests/s with ${String(CONCURRENCY)} at once`,
      );
    }
  } finally {
    redis.destroy();
    await server.stop();
  }
}

await main();
