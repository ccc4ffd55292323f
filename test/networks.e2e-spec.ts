import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { x402Client } from '@x402/fetch';
import { BatchChannels } from '../src/payments/schemes/batch-settlement/batch-channels.js';
import { CLAIMS_BY_HAND, batchBuyer } from './support/batch-channel.js';
import { startLocalChain, type LocalChain } from './support/chain.js';
import { responseJson, startPaidApp, type PaidApp } from './support/paid-app.js';
import { fundedBuyer } from './support/paying-clients.js';
import { RpcProxy } from './support/rpc-proxy.js';
import { paymentRequiredOf, v2Header } from './support/x402-payloads.js';

const BASE_SEPOLIA = 'eip155:84532';
/** The second local chain: its own chain id, its own test USDC, its own RPC (behind a proxy). */
const SECOND_ID = 31338;
const SECOND = `eip155:${SECOND_ID}` as const;
const TICKER = '/v1/ticker/BTC';
const PRICE = 2000n;

/** Asks `probe` every 250 ms until it holds (at most `ms`). */
async function eventually(probe: () => Promise<boolean>, ms = 10_000): Promise<void> {
  for (const until = Date.now() + ms; Date.now() < until;) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`not within ${ms} ms`);
}

describe('one route sold on two networks, each with two schemes', () => {
  let stack: PaidApp;
  let second: LocalChain;
  let secondRpc: RpcProxy;
  let dataDir: string;

  /** X402_PAY_TO's USDC on each chain. */
  async function payTo(): Promise<{ base: bigint; second: bigint }> {
    return {
      base: await stack.chain.usdcBalance(stack.payTo),
      second: await second.usdcBalance(stack.payTo),
    };
  }

  async function offers(): Promise<string[]> {
    const challenge = await stack.service.get(TICKER);
    expect(challenge.status).toBe(402);
    return paymentRequiredOf(challenge).accepts.map(
      (accept) => `${accept.network} ${accept.scheme} ${accept.amount}`,
    );
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'x402-networks-e2e-'));
    stack = await startPaidApp({
      env: {
        X402_NETWORKS: `base-sepolia,${SECOND}`,
        X402_SCHEMES: 'exact,batch-settlement',
        X402_BATCH_DATA_DIR: dataDir,
        ...CLAIMS_BY_HAND,
      },
      beforeApp: async () => {
        second = await startLocalChain({ chainId: SECOND_ID });
        secondRpc = await RpcProxy.start(second.rpcUrl);
        return {
          [`X402_RPC_URL_${SECOND_ID}`]: secondRpc.url,
          [`X402_ASSET_ADDRESS_${SECOND_ID}`]: second.usdcAddress,
          [`X402_ASSET_NAME_${SECOND_ID}`]: 'USDC',
          [`X402_ASSET_VERSION_${SECOND_ID}`]: '2',
        };
      },
    });
  });

  afterAll(async () => {
    await stack.close();
    await secondRpc.close();
    await second.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('offers each network × scheme at the same price; v1 clients get exact on each network', async () => {
    expect(await offers()).toEqual([
      `${BASE_SEPOLIA} exact 2000`,
      `${BASE_SEPOLIA} batch-settlement 2000`,
      `${SECOND} exact 2000`,
      `${SECOND} batch-settlement 2000`,
    ]);
    const body = await responseJson(await stack.service.get(TICKER));
    expect(
      (body['accepts'] as { network: string; scheme: string; asset: string }[]).map(
        ({ network, scheme, asset }) => [network, scheme, asset],
      ),
    ).toEqual([
      ['base-sepolia', 'exact', stack.chain.usdcAddress],
      [SECOND, 'exact', second.usdcAddress],
    ]);
  });

  it.each([
    ['base-sepolia', BASE_SEPOLIA],
    ['the second chain', SECOND],
  ] as const)(
    'exact: an official client holding USDC only on %s buys, and exactly the price moves there alone',
    async (_name, network) => {
      const chain = network === SECOND ? second : stack.chain;
      const buyer = await fundedBuyer(chain, 1_000_000n, network);
      const before = await payTo();
      const response = await buyer.fetchV2(`${stack.service.url}${TICKER}`);
      expect(response.status).toBe(200);
      const receipt = decodePaymentResponseHeader(response.headers.get('payment-response') ?? '');
      expect(receipt).toMatchObject({ success: true, network });
      const after = await payTo();
      expect([after.base - before.base, after.second - before.second]).toEqual(
        network === SECOND ? [0n, PRICE] : [PRICE, 0n],
      );
      expect(await chain.usdcBalance(buyer.account.address)).toBe(1_000_000n - PRICE);
    },
  );

  it.each([
    ['base-sepolia', BASE_SEPOLIA],
    ['the second chain', SECOND],
  ] as const)(
    'batch-settlement: a channel on %s buys twice, and its claim moves exactly both prices there alone',
    async (_name, network) => {
      const chain = network === SECOND ? second : stack.chain;
      const buyer = await batchBuyer(chain, { network });
      const before = await payTo();
      for (let call = 0; call < 2; call += 1) {
        const response = await buyer.fetch(`${stack.service.url}${TICKER}`);
        expect(response.status).toBe(200);
        expect(
          decodePaymentResponseHeader(response.headers.get('payment-response') ?? ''),
        ).toMatchObject({ success: true, network });
      }
      const round = await stack.service.app.get(BatchChannels).claimAndSettle(network);
      expect(round.settled).toMatch(/^0x[0-9a-f]{64}$/);
      const after = await payTo();
      expect([after.base - before.base, after.second - before.second]).toEqual(
        network === SECOND ? [0n, 2n * PRICE] : [2n * PRICE, 0n],
      );
    },
  );

  it("leaves a network out of the 402 while its chain's RPC is down, and offers it again when it answers", async () => {
    // a payment signed for the second network while it was offered
    const offer = paymentRequiredOf(await stack.service.get(TICKER));
    const onSecond = {
      ...offer,
      accepts: offer.accepts.filter((a) => a.network === SECOND && a.scheme === 'exact'),
    };
    const secondBuyer = await fundedBuyer(second, 1_000_000n, SECOND);
    const signer = x402Client.fromConfig({
      schemes: [{ network: SECOND, client: new ExactEvmScheme(secondBuyer.account) }],
      spendControls: { allowedAssets: [{ network: SECOND, asset: second.usdcAddress }] },
    });
    const late = await signer.createPaymentPayload(onSecond);
    secondRpc.fail('*', { kind: 'error', message: 'injected: this RPC is down' });
    try {
      await eventually(async () =>
        (await offers()).every((offer) => offer.startsWith(BASE_SEPOLIA)),
      );
      expect(await offers()).toEqual([
        `${BASE_SEPOLIA} exact 2000`,
        `${BASE_SEPOLIA} batch-settlement 2000`,
      ]);
      // a payment on the network left out is not refused as unoffered (it may be the retry of
      // one whose outcome is unknown): it fails its verification with the chain, nothing charged
      const before = await payTo();
      const refused = await stack.service.get(TICKER, { headers: v2Header(late) });
      expect(refused.status).toBe(503);
      expect(await responseJson(refused)).toMatchObject({ code: 'facilitator_unavailable' });
      expect(await payTo()).toEqual(before);
      // the other network keeps selling
      const buyer = await fundedBuyer(stack.chain, 1_000_000n, BASE_SEPOLIA);
      expect((await buyer.fetchV2(`${stack.service.url}${TICKER}`)).status).toBe(200);
      // ready (one network sells), each network's state named
      const states = [
        { network: BASE_SEPOLIA, state: 'up' },
        {
          network: SECOND,
          state: 'down',
          reason: expect.stringContaining('eth_blockNumber') as string,
        },
      ];
      const ready = await stack.service.get('/health/ready');
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ok', networks: states });
      // and so does /v1/sources, through the states the payments room contributes to it
      const sources = await stack.service.get('/v1/sources');
      expect(sources.status).toBe(200);
      expect(await sources.json()).toMatchObject({ payments: { networks: states } });
    } finally {
      secondRpc.clear();
    }
    await eventually(async () => (await offers()).some((offer) => offer.startsWith(SECOND)));
    expect(await offers()).toHaveLength(4);
  });
});
