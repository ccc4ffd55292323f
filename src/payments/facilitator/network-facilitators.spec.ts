import { jest } from '@jest/globals';
import { loadConfig } from '../../app-config.js';
import { EmbeddedFacilitatorClient } from './embedded-facilitator.js';
import { EmbeddedFacilitatorScheme } from './embedded-schemes.js';
import { createFacilitators } from './network-facilitators.js';

const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const SETTLER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

describe('createFacilitators', () => {
  it('builds the CDP client, loading the Coinbase SDK only for that mode', async () => {
    const { payments } = loadConfig({
      X402_PAY_TO: PAY_TO,
      X402_FACILITATOR: 'cdp',
      CDP_API_KEY_ID: 'id',
      CDP_API_KEY_SECRET: 'secret',
    });
    const client = (await createFacilitators(payments, [])).of('eip155:84532');
    expect(typeof client.verify).toBe('function');
    expect(typeof client.settle).toBe('function');
  });

  it('builds one in-process facilitator per network, each on its own chain, for embedded mode', async () => {
    const { payments } = loadConfig({
      X402_PAY_TO: PAY_TO,
      X402_FACILITATOR: 'embedded',
      X402_SETTLER_PRIVATE_KEY: SETTLER_KEY,
      X402_NETWORKS: 'base-sepolia,polygon',
      X402_RPC_URL: 'http://127.0.0.1:9',
      X402_RPC_URL_137: 'http://127.0.0.1:10',
    });
    const registered: string[] = [];
    const scheme = new EmbeddedFacilitatorScheme('test', (_facilitator, { network }) => {
      registered.push(network);
    });
    const facilitators = await createFacilitators(payments, [scheme]);
    // each network's facilitator settles the schemes given, and no other
    expect(registered).toEqual(['eip155:84532', 'eip155:137']);
    expect(facilitators.of('eip155:84532')).toBeInstanceOf(EmbeddedFacilitatorClient);
    expect(facilitators.of('eip155:137')).toBeInstanceOf(EmbeddedFacilitatorClient);
    expect(facilitators.all()).toHaveLength(2);
    // the settler lease changed hands: every in-process facilitator reads its nonce again
    const forgotten = [facilitators.of('eip155:84532'), facilitators.of('eip155:137')].map(
      (client) => jest.spyOn(client as EmbeddedFacilitatorClient, 'forgetNonce'),
    );
    facilitators.forgetSettlerNonces();
    for (const forget of forgotten) expect(forget).toHaveBeenCalledTimes(1);
  });

  it('shares the remote facilitator between networks, except where a network names its own', async () => {
    const { payments } = loadConfig({
      X402_PAY_TO: PAY_TO,
      X402_NETWORKS: 'base,polygon,eip155:42161',
      X402_FACILITATOR_URL_137: 'http://127.0.0.1:11',
    });
    const facilitators = await createFacilitators(payments, []);
    expect(facilitators.of('eip155:8453')).toBe(facilitators.of('eip155:42161'));
    expect(facilitators.of('eip155:137')).not.toBe(facilitators.of('eip155:8453'));
    // its own first: the x402 server takes a network from the first facilitator listing it
    expect(facilitators.all()).toEqual([
      facilitators.of('eip155:137'),
      facilitators.of('eip155:8453'),
    ]);
    expect(() => facilitators.of('eip155:1')).toThrow('not among X402_NETWORKS');
  });
});
