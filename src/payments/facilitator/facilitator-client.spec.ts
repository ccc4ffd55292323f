import { loadConfig } from '../../app-config.js';
import { EmbeddedFacilitatorClient, createFacilitatorClient } from './facilitator-client.js';

const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const SETTLER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

describe('createFacilitatorClient', () => {
  it('builds the CDP client, loading the Coinbase SDK only for that mode', async () => {
    const { payments } = loadConfig({
      X402_PAY_TO: PAY_TO,
      X402_FACILITATOR: 'cdp',
      CDP_API_KEY_ID: 'id',
      CDP_API_KEY_SECRET: 'secret',
    });
    const client = await createFacilitatorClient(payments);
    expect(typeof client.verify).toBe('function');
    expect(typeof client.settle).toBe('function');
  });

  it('builds the in-process facilitator for embedded mode', async () => {
    const { payments } = loadConfig({
      X402_PAY_TO: PAY_TO,
      X402_FACILITATOR: 'embedded',
      X402_SETTLER_PRIVATE_KEY: SETTLER_KEY,
      X402_RPC_URL: 'http://127.0.0.1:9',
    });
    expect(await createFacilitatorClient(payments)).toBeInstanceOf(EmbeddedFacilitatorClient);
  });
});
