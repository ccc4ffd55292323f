/**
 * What one JSON-RPC call to the chain costs the server, through viem's `http` transport (fetch)
 * and through the app's `jsonRpcTransport` (kept-alive node:http), against a local anvil: the
 * same calls (`eth_chainId`, `eth_getTransactionCount`), alternated in rounds, CPU µs per call
 * and the median ratio. A client with the same transport against itself reads ~1.00x.
 *
 *   npm run bench:json-rpc   (BENCH_CALLS per round, default 3000; BENCH_ROUNDS, default 5)
 */
import 'reflect-metadata';
import { createPublicClient, http, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { jsonRpcTransport } from '../src/chain/json-rpc-transport.js';
import { startLocalChain } from '../test/support/chain.js';

const CALLS = Number(process.env['BENCH_CALLS'] ?? 3000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);

interface Side {
  readonly name: string;
  readonly client: PublicClient;
  readonly cpu: number[];
}

/** CPU µs (user + system) per call of `CALLS` sequential calls. */
async function cpuPerCall({ client }: Side, address: `0x${string}`): Promise<number> {
  const before = process.cpuUsage();
  for (let index = 0; index < CALLS; index += 1) {
    if (index % 2 === 0) await client.request({ method: 'eth_chainId' });
    else await client.getTransactionCount({ address, blockTag: 'pending' });
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / CALLS;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function main(): Promise<void> {
  const chain = await startLocalChain();
  try {
    const fetchSide: Side = {
      name: 'viem http (fetch)',
      client: createPublicClient({ transport: http(chain.rpcUrl, { retryCount: 0 }) }),
      cpu: [],
    };
    const keptAlive = (name: string): Side => ({
      name,
      client: createPublicClient({
        transport: jsonRpcTransport(chain.rpcUrl, { timeoutMs: 10_000 }),
      }),
      cpu: [],
    });
    const nodeHttp = keptAlive('jsonRpcTransport');
    const again = keptAlive('jsonRpcTransport 2');
    const sides = [fetchSide, nodeHttp, again];
    const [settler] = chain.accounts;
    if (settler === undefined) throw new Error('anvil gave no accounts');
    const address = privateKeyToAccount(settler).address;
    for (const side of sides) await cpuPerCall(side, address); // a first run each, not counted
    for (let round = 0; round < ROUNDS; round += 1) {
      // the order rotates, so no side always runs first
      for (const side of [...sides.slice(round % 3), ...sides.slice(0, round % 3)]) {
        side.cpu.push(await cpuPerCall(side, address));
      }
    }
    const ratio = (a: Side, b: Side): number =>
      median(a.cpu.map((value, i) => value / (b.cpu[i] ?? Number.NaN)));
    for (const side of sides) {
      console.log(
        `${side.name.padEnd(22)} ${median(side.cpu).toFixed(0).padStart(5)} µs CPU per call`,
      );
    }
    console.log(`jsonRpcTransport / fetch      ${ratio(nodeHttp, fetchSide).toFixed(2)}x CPU`);
    console.log(`jsonRpcTransport 2 / 1        ${ratio(again, nodeHttp).toFixed(2)}x CPU`);
    console.log(
      `${String(ROUNDS)} rounds of ${String(CALLS)} calls each, medians; anvil on loopback`,
    );
  } finally {
    await chain.stop();
  }
}

await main();
