/** The parts of a browser page the interceptor uses; this project compiles without DOM types. */
interface WalletPage {
  fetch(url: string, init?: RequestInit): Promise<Response>;
  atob(data: string): string;
  btoa(data: string): string;
  readonly crypto: { getRandomValues(array: Uint8Array): Uint8Array };
  readonly ethereum?: {
    request(args: { method: string; params?: readonly unknown[] }): Promise<unknown>;
  };
  readonly document: {
    createElement(tag: string): PageElement;
    querySelector(selector: string): PageElement | null;
    readonly activeElement: PageElement | null;
  };
  /** Swagger UI (swagger-ui-init.js): its options, `x402LocalBuyer` among them. */
  readonly ui?: { getConfigs(): { readonly x402LocalBuyer?: boolean } };
}

interface PageElement {
  className: string;
  textContent: string | null;
  readonly dataset: Record<string, string | undefined>;
  closest(selector: string): PageElement | null;
  querySelector(selector: string): PageElement | null;
  append(...nodes: PageElement[]): void;
  prepend(...nodes: PageElement[]): void;
}

interface Requirement {
  readonly scheme: string;
  readonly network: string;
  readonly asset: string;
  readonly amount: string;
  readonly payTo: string;
  readonly maxTimeoutSeconds: number;
  readonly extra?: { readonly name?: string; readonly version?: string };
}

interface SwaggerRequest {
  userFetch?: (url: string, init: RequestInit) => Promise<Response>;
}

/**
 * Swagger UI's `requestInterceptor`: "Try it out" on a paid operation pays with the browser's
 * EIP-1193 wallet. On a 402 it asks the wallet to sign the EIP-3009 transfer of an offered
 * `exact` requirement (EIP-712 `TransferWithAuthorization`; on the wallet's chain when the route
 * is sold on several networks), repeats the request with the `PAYMENT-SIGNATURE` header and
 * shows the receipt in a panel at the top of the paying operation's Responses. On the local
 * stack (Swagger option `x402LocalBuyer`) its test buyer signs instead (`POST /sandbox/wallet`);
 * elsewhere, without a wallet, the 402 is shown. Swagger UI receives this function as source
 * text, so it refers to nothing outside itself.
 */
export function x402RequestInterceptor(request: SwaggerRequest): SwaggerRequest {
  const page = globalThis as unknown as WalletPage;
  const toBase64 = (value: unknown): string => {
    let binary = '';
    for (const byte of new TextEncoder().encode(JSON.stringify(value))) {
      binary += String.fromCharCode(byte);
    }
    return page.btoa(binary);
  };
  const fromBase64 = (text: string): unknown =>
    JSON.parse(
      new TextDecoder().decode(Uint8Array.from(page.atob(text), (char) => char.charCodeAt(0))),
    );
  // the operation whose Execute button was pressed: its receipt goes with its response
  const operation = page.document.activeElement?.closest('.opblock') ?? null;
  /** A panel in Swagger UI's own classes (a section header, then a code block), one per operation. */
  const show = (text: string, state: 'paid' | 'failed'): void => {
    const place =
      operation?.querySelector('.responses-wrapper') ??
      operation ??
      page.document.querySelector('#swagger-ui');
    if (place === null) return;
    let panel = place.querySelector('.x402-receipt');
    if (panel === null) {
      panel = page.document.createElement('div');
      panel.className = 'x402-receipt';
      const header = page.document.createElement('div');
      header.className = 'opblock-section-header';
      const title = page.document.createElement('h4');
      title.className = 'opblock-title';
      title.textContent = 'Payment receipt';
      header.append(title);
      const inner = page.document.createElement('div');
      inner.className = 'responses-inner';
      const pre = page.document.createElement('pre');
      pre.className = 'microlight x402-receipt-text';
      inner.append(pre);
      panel.append(header, inner);
      place.prepend(panel);
    }
    panel.dataset['state'] = state;
    const body = panel.querySelector('.x402-receipt-text');
    if (body !== null) body.textContent = text;
  };

  /**
   * What was paid as a person reads it: USDC (6 decimals) as a decimal amount, with the atomic
   * amount; any other token in its atomic units.
   */
  const paidAmount = (accepted: Requirement): string => {
    const token = accepted.extra?.name;
    if (token !== 'USDC' && token !== 'USD Coin') {
      return `${accepted.amount} atomic units of ${token ?? accepted.asset}`;
    }
    const digits = accepted.amount.padStart(7, '0');
    const fraction = digits.slice(-6).replace(/0+$/, '');
    const whole = digits.slice(0, -6);
    return `${fraction === '' ? whole : `${whole}.${fraction}`} USDC (${accepted.amount} atomic units)`;
  };

  /** The local stack's buyer (`POST /sandbox/wallet`), when this page is served by it. */
  const sandboxWallet = async (url: string): Promise<WalletPage['ethereum']> => {
    const endpoint = new URL('/sandbox/wallet', url).href;
    const ask = async (args: { method: string; params?: readonly unknown[] }): Promise<unknown> => {
      const response = await page.fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(args),
      });
      const answer = (await response.json()) as { result?: unknown; error?: string };
      if (!response.ok) throw new Error(answer.error ?? `sandbox wallet: HTTP ${response.status}`);
      return answer.result;
    };
    try {
      await ask({ method: 'eth_accounts' });
      return { request: ask };
    } catch {
      return undefined;
    }
  };

  request.userFetch = async (url, init) => {
    const first = await page.fetch(url, init);
    const challenge = first.headers.get('PAYMENT-REQUIRED');
    if (first.status !== 402 || challenge === null) return first;
    const localBuyer = page.ui?.getConfigs().x402LocalBuyer === true;
    const wallet = page.ethereum ?? (localBuyer ? await sandboxWallet(url) : undefined);
    const payer = page.ethereum === undefined ? 'the sandbox buyer ' : '';
    if (wallet === undefined) {
      show(
        'Payment required: connect an EIP-1193 wallet (a browser extension) to pay here.',
        'failed',
      );
      return first;
    }
    try {
      const required = fromBase64(challenge) as {
        readonly resource?: unknown;
        readonly accepts: readonly Requirement[];
      };
      const payable = required.accepts.filter(
        (candidate) => candidate.scheme === 'exact' && candidate.network.startsWith('eip155:'),
      );
      // on several networks: the one the wallet is on, else the first (the wallet is switched)
      const walletChain = Number(await wallet.request({ method: 'eth_chainId' }));
      const accepted =
        payable.find((candidate) => candidate.network === `eip155:${walletChain}`) ?? payable[0];
      if (accepted === undefined) return first;
      const chainId = Number(accepted.network.slice('eip155:'.length));
      const [from] = (await wallet.request({ method: 'eth_requestAccounts' })) as string[];
      if (from === undefined) throw new Error('the wallet shared no account');
      if (walletChain !== chainId) {
        await wallet.request({
          method: 'wallet_switchEthereumChain',
          params: [{ chainId: `0x${chainId.toString(16)}` }],
        });
      }
      const now = Math.floor(Date.now() / 1000);
      const nonce = Array.from(page.crypto.getRandomValues(new Uint8Array(32)), (byte) =>
        byte.toString(16).padStart(2, '0'),
      ).join('');
      const authorization = {
        from,
        to: accepted.payTo,
        value: accepted.amount,
        // a little in the past: the chain's clock may lag the browser's
        validAfter: String(now - 600),
        validBefore: String(now + accepted.maxTimeoutSeconds),
        nonce: `0x${nonce}`,
      };
      const typedData = {
        types: {
          EIP712Domain: [
            { name: 'name', type: 'string' },
            { name: 'version', type: 'string' },
            { name: 'chainId', type: 'uint256' },
            { name: 'verifyingContract', type: 'address' },
          ],
          TransferWithAuthorization: [
            { name: 'from', type: 'address' },
            { name: 'to', type: 'address' },
            { name: 'value', type: 'uint256' },
            { name: 'validAfter', type: 'uint256' },
            { name: 'validBefore', type: 'uint256' },
            { name: 'nonce', type: 'bytes32' },
          ],
        },
        primaryType: 'TransferWithAuthorization',
        domain: {
          name: accepted.extra?.name,
          version: accepted.extra?.version,
          chainId,
          verifyingContract: accepted.asset,
        },
        message: authorization,
      };
      const signature = await wallet.request({
        method: 'eth_signTypedData_v4',
        params: [from, JSON.stringify(typedData)],
      });
      const payment = {
        x402Version: 2,
        ...(required.resource === undefined ? {} : { resource: required.resource }),
        accepted,
        payload: { signature, authorization },
      };
      const headers = new Headers(init.headers);
      headers.set('PAYMENT-SIGNATURE', toBase64(payment));
      const paid = await page.fetch(url, { ...init, headers });
      const receipt = paid.headers.get('PAYMENT-RESPONSE');
      const settled =
        receipt === null
          ? undefined
          : (fromBase64(receipt) as { success?: boolean; transaction?: string; network?: string });
      if (paid.ok && settled?.success === true) {
        show(
          `Paid ${paidAmount(accepted)} from ` +
            `${payer}${from} to ${accepted.payTo}: transaction ${String(settled.transaction)} on ` +
            String(settled.network),
          'paid',
        );
      } else {
        show(
          `The payment was not accepted: HTTP ${paid.status}, see the response below.`,
          'failed',
        );
      }
      return paid;
    } catch (error) {
      show(
        `Wallet payment failed: ${error instanceof Error ? error.message : String(error)}`,
        'failed',
      );
      return first;
    }
  };
  return request;
}
