import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'puppeteer-core';
import { createPublicClient, erc20Abi, http } from 'viem';
import type { Sandbox } from '../scripts/sandbox.js';
import { startOfflineSandbox } from './support/offline-sandbox.js';
import { Started } from './support/started.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import {
  execute,
  injectWallet,
  launchChromium,
  requireChromium,
  textOf,
} from './support/swagger-ui.js';

/** The receipt panel: in the paying operation's Responses, above its response. */
const RECEIPT = '[id$="-getTicker"] .responses-wrapper > .x402-receipt .x402-receipt-text';
const RECEIPT_TITLE = '[id$="-getTicker"] .x402-receipt .opblock-section-header .opblock-title';

describe('paying from Swagger UI with a browser wallet (headless Chromium)', () => {
  let stack: PaidApp;
  let browser: Browser;
  const started = new Started();

  beforeAll(async () => {
    requireChromium();
    stack = await started.add(startPaidApp());
    browser = await started.add(launchChromium());
  }, 60_000);

  afterAll(() => started.closeAll());

  it('Execute on getTicker asks the wallet to sign, pays on chain and shows the price and the receipt', async () => {
    const page = await browser.newPage();
    const requests: string[] = [];
    await injectWallet(page, { buyer: stack.buyer, chainId: stack.chain.chainId }, requests);
    await page.goto(`${stack.service.url}/docs`);
    const before = await stack.balances();

    expect(await execute(page, 'getTicker')).toBe('200');

    expect(requests).toEqual(
      expect.arrayContaining(['eth_requestAccounts', 'eth_chainId', 'eth_signTypedData_v4']),
    );
    const body = await textOf(
      page,
      '[id$="-getTicker"] .live-responses-table .response-col_description pre',
    );
    const served = JSON.parse(body) as { currency: string; price: Record<string, number> };
    expect(served.currency).toBe('USD');
    expect(Object.keys(served.price)).toEqual(['BTC']);
    expect(served.price.BTC).toBeGreaterThan(0);
    const receipt = await textOf(page, RECEIPT);
    expect(receipt).toContain('Paid 0.002 USDC (2000 atomic units) from ');
    expect(await textOf(page, RECEIPT_TITLE)).toBe('Payment receipt');
    const transaction = /transaction (0x[0-9a-f]{64})/.exec(receipt)?.[1] as
      `0x${string}` | undefined;
    expect(transaction).toBeDefined();
    const onChain = await stack.chain.publicClient.getTransactionReceipt({ hash: transaction! });
    expect(onChain.status).toBe('success');
    expect(await stack.balances()).toEqual({
      buyer: before.buyer - 2000n,
      payTo: before.payTo + 2000n,
    });
    await page.close();
  }, 60_000);

  it('without a wallet shows the 402 and says a wallet is needed, asking no local buyer, charging nothing', async () => {
    const page = await browser.newPage();
    const asked: string[] = [];
    page.on('request', (request) => asked.push(new URL(request.url()).pathname));
    await page.goto(`${stack.service.url}/docs`);
    const before = await stack.balances();
    expect(await execute(page, 'getTicker')).toBe('402');
    const notice = await textOf(page, RECEIPT);
    expect(notice).toContain('connect an EIP-1193 wallet');
    expect(asked).toContain('/v1/ticker/BTC');
    expect(asked).not.toContain('/sandbox/wallet');
    expect(await stack.balances()).toEqual(before);
    await page.close();
  }, 60_000);

  it('the page says a browser wallet pays, and nothing of a test buyer', async () => {
    const page = await browser.newPage();
    await page.goto(`${stack.service.url}/docs`);
    const description = await textOf(page, '.info .description');
    expect(description).toContain('pays with your browser wallet (EIP-1193)');
    expect(description).not.toContain('test buyer');
    await page.close();
  }, 60_000);
});

describe('paying from Swagger UI served by the local stack, with no browser wallet', () => {
  let sandbox: Sandbox;
  let browser: Browser;
  let dir: string;
  const started = new Started();

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'sandbox-wallet-'));
    requireChromium();
    sandbox = await started.add(startOfflineSandbox(path.join(dir, '.sandbox.json')));
    browser = await started.add(launchChromium());
  }, 60_000);

  afterAll(async () => {
    await started.closeAll();
    rmSync(dir, { recursive: true, force: true });
  });

  const buyerBalance = (): Promise<bigint> =>
    createPublicClient({ transport: http(sandbox.state.rpcUrl) }).readContract({
      address: sandbox.state.usdc,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [sandbox.state.buyerAddress],
    });

  it('pays as the sandbox buyer', async () => {
    const page = await browser.newPage();
    await page.goto(`${sandbox.state.apiUrl}/docs`);
    const before = await buyerBalance();

    expect(await execute(page, 'getTicker')).toBe('200');

    const receipt = await textOf(page, RECEIPT);
    expect(receipt).toContain(
      `Paid 0.002 USDC (2000 atomic units) from the sandbox buyer ${sandbox.state.buyerAddress}`,
    );
    const description = await textOf(page, '.info .description');
    expect(description).toContain("pays as the local stack's test buyer");
    expect(description).not.toContain('EIP-1193');
    expect(receipt).toMatch(/transaction 0x[0-9a-f]{64} on eip155:84532/);
    expect(await buyerBalance()).toBe(before - 2000n);
    await page.close();
  }, 60_000);

  it('signs for its own docs page only', async () => {
    const response = await fetch(`${sandbox.state.apiUrl}/sandbox/wallet`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://elsewhere.example' },
      body: JSON.stringify({ method: 'eth_accounts' }),
    });
    expect(response.status).toBe(403);
    const withoutOrigin = await fetch(`${sandbox.state.apiUrl}/sandbox/wallet`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'eth_accounts' }),
    });
    expect(withoutOrigin.status).toBe(403);
  });

  it('signs USDC transfer authorizations and nothing else', async () => {
    const response = await fetch(`${sandbox.state.apiUrl}/sandbox/wallet`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: sandbox.state.apiUrl },
      body: JSON.stringify({
        method: 'eth_signTypedData_v4',
        params: [
          sandbox.state.buyerAddress,
          JSON.stringify({
            domain: { name: 'Permit2', chainId: 84532 },
            types: { Permit: [{ name: 'spender', type: 'address' }] },
            primaryType: 'Permit',
            message: { spender: sandbox.state.buyerAddress },
          }),
        ],
      }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: 'the sandbox buyer signs transfer authorizations only',
    });
  });
});
