import { EmbeddedFacilitatorClient } from '../../facilitator/embedded-facilitator.js';
import { batchEmbeddedFacilitator } from '../batch-settlement/batch-facilitator-scheme.js';
import { exactEmbeddedFacilitator } from './exact-facilitator-scheme.js';

const SETTLER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const RPC = 'http://127.0.0.1:9';

/** The (version, scheme, network) kinds an embedded facilitator lists (no chain call). */
async function kinds(client: EmbeddedFacilitatorClient): Promise<string[]> {
  const { kinds } = await client.getSupported();
  return kinds.map(({ x402Version, scheme, network }) => `${x402Version} ${scheme} ${network}`);
}

describe("the schemes' sides of the embedded facilitator", () => {
  it('exact settles for x402 v2 on its network and for v1 clients', async () => {
    const client = new EmbeddedFacilitatorClient(SETTLER_KEY, RPC, 'eip155:84532', [
      exactEmbeddedFacilitator,
    ]);
    const listed = await kinds(client);
    expect(listed).toContain('2 exact eip155:84532');
    expect(listed).toContain('1 exact base-sepolia');
    expect(listed.filter((kind) => kind.includes('batch-settlement'))).toEqual([]);
  });

  it('batch-settlement adds its scheme on the same network', async () => {
    const client = new EmbeddedFacilitatorClient(SETTLER_KEY, RPC, 'eip155:84532', [
      exactEmbeddedFacilitator,
      batchEmbeddedFacilitator,
    ]);
    expect(await kinds(client)).toContain('2 batch-settlement eip155:84532');
  });

  it('an embedded facilitator given no scheme settles nothing', async () => {
    const client = new EmbeddedFacilitatorClient(SETTLER_KEY, RPC, 'eip155:84532', []);
    expect(await kinds(client)).toEqual([]);
  });
});
