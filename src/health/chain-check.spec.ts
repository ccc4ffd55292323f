import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../app-config.js';
import { NetworkStates } from '../payments/index.js';
import type { MetricsService } from '../metrics/metrics.service.js';
import { ChainCheck } from './chain-check.js';

/** A JSON-RPC endpoint on loopback answering eth_blockNumber, or not at all while `silent`. */
async function fakeRpc(): Promise<{
  server: Server;
  url: string;
  calls: string[];
  silent: boolean;
}> {
  const state = { calls: [] as string[], silent: false };
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const { id, method } = JSON.parse(body) as { id: number; method: string };
      state.calls.push(method);
      if (state.silent) return;
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0x10' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, { server, url: `http://127.0.0.1:${port}` });
}

function checkFor(rpcUrl: string | undefined): { check: ChainCheck; watched: boolean } {
  let watched = false;
  const metrics = {
    watchChains: () => {
      watched = true;
    },
  } as unknown as MetricsService;
  const { payments } = loadConfig({
    X402_PAY_TO: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    ...(rpcUrl === undefined ? {} : { X402_RPC_URL: rpcUrl }),
  });
  const check = new ChainCheck(new NetworkStates(payments), metrics);
  return {
    check,
    get watched() {
      return watched;
    },
  };
}

describe('ChainCheck', () => {
  it('is not used, and registers no gauges, without X402_RPC_URL', async () => {
    const { check, watched } = checkFor(undefined);
    expect(check.used).toBe(false);
    expect(watched).toBe(false);
    expect(await check.check()).toEqual({ ok: true });
  });

  it('asks eth_blockNumber once for probes within the cache time', async () => {
    const rpc = await fakeRpc();
    try {
      const { check, watched } = checkFor(rpc.url);
      expect(watched).toBe(true);
      const results = await Promise.all([check.check(), check.check(), check.check()]);
      expect(results).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
      expect(rpc.calls).toEqual(['eth_blockNumber']);
    } finally {
      rpc.server.closeAllConnections();
      rpc.server.close();
    }
  });

  it('fails with chain_unavailable, never naming the URL, when the RPC does not answer', async () => {
    const rpc = await fakeRpc();
    rpc.silent = true;
    try {
      const result = await checkFor(`${rpc.url}/secret-key`).check.check();
      expect(result).toMatchObject({ ok: false, code: 'chain_unavailable', retryAfterSeconds: 2 });
      expect((result as { reason: string }).reason).toMatch(
        /^eip155:84532: eth_blockNumber failed/,
      );
      expect(JSON.stringify(result)).not.toContain('secret-key');
    } finally {
      rpc.server.closeAllConnections();
      rpc.server.close();
    }
  });
});
