import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../app-config.js';
import { NETWORK_PROBE_INTERVAL_MS, NetworkStates } from './network-states.js';

/** A JSON-RPC endpoint on loopback answering eth_blockNumber, or nothing while `silent`. */
async function fakeRpc(): Promise<{ server: Server; url: string; silent: boolean }> {
  const state = { silent: false };
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      if (state.silent) return;
      const { id } = JSON.parse(body) as { id: number };
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0x10' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, { server, url: `http://127.0.0.1:${port}` });
}

function close(server: Server): void {
  server.closeAllConnections();
  server.close();
}

describe('NetworkStates', () => {
  it('leaves a network whose chain does not answer out of the offer, and offers it again once it does', async () => {
    const [base, polygon] = [await fakeRpc(), await fakeRpc()];
    try {
      const states = new NetworkStates(
        loadConfig({
          X402_PAY_TO: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
          X402_NETWORKS: 'base,polygon,eip155:42161',
          X402_RPC_URL: base.url,
          X402_RPC_URL_137: `${polygon.url}/secret-key`,
        }).payments,
      );
      expect(states.checked).toBe(true);
      // never asked yet: offered
      expect(states.offered()).toEqual(['eip155:8453', 'eip155:137', 'eip155:42161']);
      polygon.silent = true;
      const seen = await states.states();
      expect(seen.map((state) => [state.network, state.state])).toEqual([
        ['eip155:8453', 'up'],
        ['eip155:137', 'down'],
        ['eip155:42161', 'unchecked'],
      ]);
      expect(seen[1]?.reason).toMatch(/^eth_blockNumber failed within 1000 ms/);
      expect(JSON.stringify(seen)).not.toContain('secret-key');
      expect(states.offered()).toEqual(['eip155:8453', 'eip155:42161']);

      polygon.silent = false;
      await new Promise((resolve) => setTimeout(resolve, NETWORK_PROBE_INTERVAL_MS));
      await states.states();
      expect(states.offered()).toEqual(['eip155:8453', 'eip155:137', 'eip155:42161']);
    } finally {
      close(base.server);
      close(polygon.server);
    }
  });

  it('never leaves the last network out: with every chain down, all are offered', async () => {
    const [base, polygon] = [await fakeRpc(), await fakeRpc()];
    base.silent = polygon.silent = true;
    try {
      const states = new NetworkStates(
        loadConfig({
          X402_PAY_TO: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
          X402_NETWORKS: 'base,polygon',
          X402_RPC_URL: base.url,
          X402_RPC_URL_137: polygon.url,
        }).payments,
      );
      expect((await states.states()).map((state) => state.state)).toEqual(['down', 'down']);
      expect(states.offered()).toEqual(['eip155:8453', 'eip155:137']);
    } finally {
      close(base.server);
      close(polygon.server);
    }
  });
});
