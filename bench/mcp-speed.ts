/**
 * What selling a price as an MCP tool adds to selling it over HTTP: the same paid `get_ticker`
 * bought in alternating rounds as `GET /v1/ticker/BTC` with `PAYMENT-SIGNATURE` and as a
 * `tools/call` on `POST /mcp` with `_meta["x402/payment"]`, one call at a time, each settled
 * (`exact`) on a local anvil. Payments are signed before the clock, so a timed call is the round
 * trip and the service's work; the service runs in this process (as the e2e tests start it), so
 * both sides share its event loop alike. Prints each side's p50 and p90 and the median of the
 * per-round p50 differences; the design keeps the tool's p50 within +2 ms of the route's.
 *
 *   npm run bench:mcp   (BENCH_CALLS per side and round, default 40; BENCH_ROUNDS, default 3)
 */
import 'reflect-metadata';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { x402Client } from '@x402/fetch';
import { startPaidApp } from '../test/support/paid-app.js';
import { paymentRequiredOf } from '../test/support/x402-payloads.js';

const CALLS = Number(process.env['BENCH_CALLS'] ?? 40);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const stack = await startPaidApp({
    env: { X402_SCHEMES: 'exact', RATE_LIMIT_UNPAID: '0', RATE_LIMIT_FREE: '0' },
  });
  try {
    const payer = new x402Client().register('eip155:*', new ExactEvmScheme(stack.buyer.account));
    const mcp = (body: unknown): Promise<Response> =>
      fetch(`${stack.service.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
      });
    const call = (id: number, payment?: PaymentPayload) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name: 'get_ticker',
        arguments: { symbol: 'BTC' },
        ...(payment === undefined ? {} : { _meta: { 'x402/payment': payment } }),
      },
    });
    const httpRequired = paymentRequiredOf(await stack.service.get('/v1/ticker/BTC'));
    const unpaid = (await (await mcp(call(0))).json()) as {
      result: { structuredContent: PaymentRequired };
    };
    const toolRequired = unpaid.result.structuredContent;

    const sides = {
      http: async (payment: PaymentPayload) => {
        const response = await stack.service.get('/v1/ticker/BTC', {
          headers: { 'payment-signature': encodePaymentSignatureHeader(payment) },
        });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`HTTP paid call: ${String(response.status)}`);
      },
      mcp: async (payment: PaymentPayload) => {
        const answer = (await (await mcp(call(1, payment))).json()) as {
          result?: { isError?: boolean };
        };
        if (answer.result?.isError !== false && answer.result?.isError !== undefined) {
          throw new Error(`MCP paid call failed: ${JSON.stringify(answer)}`);
        }
      },
    };
    const times = { http: [] as number[], mcp: [] as number[] };
    const differences: number[] = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      const p50s: Record<string, number> = {};
      for (const side of ['http', 'mcp'] as const) {
        const required = side === 'http' ? httpRequired : toolRequired;
        const payments: PaymentPayload[] = [];
        for (let index = 0; index < CALLS; index += 1) {
          payments.push(await payer.createPaymentPayload(required));
        }
        const spent: number[] = [];
        for (const payment of payments) {
          const started = performance.now();
          await sides[side](payment);
          spent.push(performance.now() - started);
        }
        times[side].push(...spent);
        p50s[side] = quantile(spent, 0.5);
      }
      differences.push((p50s['mcp'] ?? 0) - (p50s['http'] ?? 0));
      console.log(
        `round ${String(round)}: http p50 ${(p50s['http'] ?? 0).toFixed(2)} ms, ` +
          `mcp p50 ${(p50s['mcp'] ?? 0).toFixed(2)} ms`,
      );
    }
    for (const side of ['http', 'mcp'] as const) {
      console.log(
        `${side.padEnd(4)} p50 ${quantile(times[side], 0.5).toFixed(2)} ms, ` +
          `p90 ${quantile(times[side], 0.9).toFixed(2)} ms (${String(times[side].length)} paid calls)`,
      );
    }
    console.log(`mcp - http p50, median of rounds: ${quantile(differences, 0.5).toFixed(2)} ms`);
  } finally {
    await stack.close();
  }
}

await main();
