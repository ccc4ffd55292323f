/** Swagger UI driven in headless Chromium (puppeteer-core), with an injected browser wallet. */
import { existsSync } from 'node:fs';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import type { TypedDataDefinition } from 'viem';
import type { Buyer } from './paying-clients.js';

/** Debian's `chromium` package (.ci/run installs it); CHROMIUM_PATH points elsewhere. */
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const UINT_FIELDS = new Set(['value', 'validAfter', 'validBefore', 'chainId']);

interface WalletRequest {
  readonly method: string;
  readonly params?: readonly unknown[];
}

/** Fails with the package to install when there is no Chromium to drive. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`,
    );
  }
}

/** Headless Chromium as root on a machine without a display. */
export function launchChromium(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu'],
  });
}

/**
 * What a wallet extension does with `eth_signTypedData_v4`: parse the JSON, sign it with the
 * account's key (uint256 fields arrive as decimal strings).
 */
async function signTypedDataV4(buyer: Buyer, json: string): Promise<string> {
  const typed = JSON.parse(json, (key, value: unknown) =>
    UINT_FIELDS.has(key) && (typeof value === 'string' || typeof value === 'number')
      ? BigInt(value)
      : value,
  ) as TypedDataDefinition & { types: Record<string, unknown> };
  // viem derives the domain type itself
  const types = Object.fromEntries(
    Object.entries(typed.types).filter(([name]) => name !== 'EIP712Domain'),
  );
  return buyer.account.signTypedData({ ...typed, types } as TypedDataDefinition);
}

/** An EIP-1193 provider in the page, backed by the buyer's key in the test process. */
export async function injectWallet(
  page: Page,
  wallet: { readonly buyer: Buyer; readonly chainId: number },
  requests: string[],
): Promise<void> {
  const { buyer, chainId } = wallet;
  await page.exposeFunction('__walletRequest', async (request: WalletRequest) => {
    requests.push(request.method);
    switch (request.method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return [buyer.account.address];
      case 'eth_chainId':
        return `0x${chainId.toString(16)}`;
      case 'eth_signTypedData_v4': {
        const [from, json] = request.params as [string, string];
        if (from.toLowerCase() !== buyer.account.address.toLowerCase())
          throw new Error(`unknown account ${from}`);
        return signTypedDataV4(buyer, json);
      }
      default:
        throw new Error(`unsupported method ${request.method}`);
    }
  });
  await page.evaluateOnNewDocument(() => {
    const page = globalThis as unknown as {
      __walletRequest(request: WalletRequest): Promise<unknown>;
      ethereum?: unknown;
    };
    page.ethereum = { request: (request: WalletRequest) => page.__walletRequest(request) };
  });
}

/** The text of the first element matching `selector` (the project compiles without DOM types). */
export function textOf(page: Page, selector: string): Promise<string> {
  return page.$eval(selector, (node: unknown) =>
    ((node as { textContent?: string | null }).textContent ?? '').trim(),
  );
}

/** Opens an operation in Swagger UI, "Try it out", Execute; resolves with the shown status. */
export async function execute(page: Page, operationId: string): Promise<string> {
  const block = `[id$="-${operationId}"]`;
  await page.waitForSelector(`${block} .opblock-summary`);
  await page.click(`${block} .opblock-summary`);
  await page.waitForSelector(`${block} .try-out__btn`);
  await page.click(`${block} .try-out__btn`);
  await page.waitForSelector(`${block} .execute`);
  await page.click(`${block} .execute`);
  const status = `${block} .live-responses-table .response .response-col_status`;
  await page.waitForSelector(status, { timeout: 20_000 });
  return textOf(page, status);
}
