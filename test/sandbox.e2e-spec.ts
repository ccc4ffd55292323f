import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  EXIT_FAILED,
  EXIT_OK,
  EXIT_USAGE,
  runClient,
  type ClientOptions,
} from '../scripts/client.js';
import { readSandboxState } from '../scripts/sandbox-state.js';
import { describeSandbox, type Sandbox } from '../scripts/sandbox.js';
import { chooseVenues, probeVenues } from '../scripts/venue-choice.js';
import { expectServedPrice, medianOf, recordedUsdPrices } from './support/expected-prices.js';
import { startOfflineSandbox } from './support/offline-sandbox.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { USDC } from './support/paying-clients.js';

const TX_HASH = /settlement tx (0x[0-9a-f]{64}) on eip155:84532/;

interface Run {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

async function run(argv: string[], options: Omit<ClientOptions, 'out' | 'err'>): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runClient(argv, {
    ...options,
    out: (text) => out.push(text),
    err: (text) => err.push(text),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The price printed for `symbol` in the client's pretty-printed body. */
function printedPrice(out: string, symbol: string): number {
  const match = new RegExp(`"${symbol}": ([0-9.e+-]+)`).exec(out);
  if (match?.[1] === undefined) throw new Error(`no ${symbol} price in:\n${out}`);
  return Number(match[1]);
}

function expectRecordedPrice(out: string, symbol: string): void {
  expectServedPrice(printedPrice(out, symbol), medianOf(Object.values(recordedUsdPrices(symbol))));
}

describe('npm run client (scripts/client.ts) paying a real paid app', () => {
  let stack: PaidApp;
  let buyerKey: Hex;
  let buyer: Hex;

  beforeAll(async () => {
    stack = await startPaidApp({ markets: { venues: ['coinbase', 'kraken', 'bitstamp'] } });
    // a buyer of our own: the client takes a private key, which PaidApp's buyer does not expose
    buyerKey = generatePrivateKey();
    buyer = privateKeyToAccount(buyerKey).address;
    // a channel's deposit (USD 1 by default) and the exact purchases after it
    await stack.chain.mintUsdc(buyer, 10n * USDC);
  });

  afterAll(async () => {
    await stack.close();
  });

  const client = (argv: string[]): Promise<Run> =>
    run(argv, { apiUrl: stack.service.url, privateKey: buyerKey, stateFile: '/nonexistent' });

  const balances = async (): Promise<{ buyer: bigint; payTo: bigint }> => ({
    buyer: await stack.chain.usdcBalance(buyer),
    payTo: (await stack.balances()).payTo,
  });

  async function expectSettled(
    out: string,
    atomic: bigint,
    before: { buyer: bigint; payTo: bigint },
  ) {
    const hash = TX_HASH.exec(out)?.[1] as Hex | undefined;
    expect(hash).toBeDefined();
    const receipt = await stack.chain.publicClient.getTransactionReceipt({ hash: hash! });
    expect(receipt.status).toBe('success');
    expect(await balances()).toEqual({
      buyer: before.buyer - atomic,
      payTo: before.payTo + atomic,
    });
  }

  it.each([
    { argv: ['ticker', 'BTC'], atomic: 2000n, usdc: '0.002', symbols: ['BTC'] },
    { argv: ['tickers', 'btc,eth'], atomic: 8000n, usdc: '0.008', symbols: ['BTC', 'ETH'] },
    { argv: ['all'], atomic: 10000n, usdc: '0.01', symbols: ['BTC', 'ETH'] },
  ])('$argv prints the prices, $usdc USDC paid and the settlement tx', async (c) => {
    const before = await balances();
    const result = await run(c.argv, { apiUrl: stack.service.url, privateKey: buyerKey });

    expect(result).toMatchObject({ code: EXIT_OK, err: '' });
    for (const symbol of c.symbols) expectRecordedPrice(result.out, symbol);
    expect(result.out).toContain(
      `paid ${c.usdc} USDC (${c.atomic} atomic) to ${stack.payTo} on eip155:84532`,
    );
    await expectSettled(result.out, c.atomic, before);
  });

  it('takes the API and key from the environment', async () => {
    const before = await balances();
    const result = await run(['ticker', 'eth'], {
      env: { API_URL: `${stack.service.url}/`, BUYER_PRIVATE_KEY: buyerKey },
      stateFile: '/nonexistent',
    });
    expect(result.code).toBe(EXIT_OK);
    expectRecordedPrice(result.out, 'ETH');
    await expectSettled(result.out, 2000n, before);
  });

  it('--batch pays through a channel: a deposit first, then vouchers without a transaction', async () => {
    const channelsDir = mkdtempSync(path.join(tmpdir(), 'x402-client-channels-'));
    const batch = (argv: string[]) =>
      run([...argv, '--batch'], { apiUrl: stack.service.url, privateKey: buyerKey, channelsDir });
    const before = await balances();

    const first = await batch(['ticker', 'BTC']);
    expect(first).toMatchObject({ code: EXIT_OK, err: '' });
    expectRecordedPrice(first.out, 'BTC');
    expect(first.out).toContain('(deposit); channel 0x');
    const deposited = before.buyer - (await balances()).buyer;
    expect(deposited).toBeGreaterThanOrEqual(2000n);

    const second = await batch(['tickers', 'btc,eth']);
    expect(second).toMatchObject({ code: EXIT_OK, err: '' });
    expect(second.out).toContain('paid 0.008 USDC (8000 atomic)');
    expect(second.out).toContain(`voucher recorded, no transaction; channel 0x`);
    expect(second.out).toContain(`10000 charged of ${deposited} deposited`);
    // nothing reached X402_PAY_TO yet: the vouchers are claimed later, in one transaction
    expect(await balances()).toEqual({ buyer: before.buyer - deposited, payTo: before.payTo });
  });

  it('--mcp buys the same answer as a paid MCP tool call, and exactly its price moves', async () => {
    const before = await balances();
    const result = await client(['--mcp', 'tickers', 'btc,eth']);
    expect(result).toMatchObject({ code: EXIT_OK, err: '' });
    expect(result.out).toContain(
      `MCP get_tickers {"symbols":["btc","eth"]} on ${stack.service.url}/mcp`,
    );
    for (const symbol of ['BTC', 'ETH']) expectRecordedPrice(result.out, symbol);
    expect(result.out).toContain(`paid 0.008 USDC (8000 atomic) to ${stack.payTo} on eip155:84532`);
    // the tool result's attestation (its _meta) is checked as an HTTP answer's header is
    expect(result.out).toMatch(/^attestation ok \(signer 0x[0-9a-fA-F]{40}\)$/m);
    await expectSettled(result.out, 8000n, before);
    const refused = await client(['--mcp', 'ticker', 'NOPE']);
    expect(refused.code).toBe(EXIT_FAILED);
    expect(refused.err).toContain('"code": "unknown_symbol"');
  });

  it.each([
    { argv: ['markets', 'BTC,ETH'], tool: 'get_markets {"symbols":"BTC,ETH"}', paid: 5000n },
    { argv: ['ohlc', 'BTC', '1h'], tool: 'get_ohlc {"symbol":"BTC","interval":"1h"}', paid: 5000n },
  ])(
    "--mcp $argv buys the route's own tool, its attestation checked",
    async ({ argv, tool, paid }) => {
      const before = await balances();
      const result = await client(['--mcp', ...argv]);
      expect(result).toMatchObject({ code: EXIT_OK, err: '' });
      expect(result.out).toContain(`MCP ${tool} on ${stack.service.url}/mcp`);
      expect(result.out).toMatch(/^attestation ok \(signer 0x[0-9a-fA-F]{40}\)$/m);
      await expectSettled(result.out, paid, before);
    },
  );

  it('--mcp --batch pays a tool call through a channel: a deposit, then a voucher', async () => {
    const channelsDir = mkdtempSync(path.join(tmpdir(), 'x402-mcp-channels-'));
    // a buyer of its own: a new channel (the --batch test above opened one for buyerKey)
    const channelKey = generatePrivateKey();
    await stack.chain.mintUsdc(privateKeyToAccount(channelKey).address, USDC);
    const batch = (argv: string[]) =>
      run([...argv, '--mcp', '--batch'], {
        apiUrl: stack.service.url,
        privateKey: channelKey,
        channelsDir,
      });
    const first = await batch(['ticker', 'BTC']);
    expect(first).toMatchObject({ code: EXIT_OK, err: '' });
    expect(first.out).toContain('(deposit); channel 0x');
    expect(first.out).toContain('attestation ok (signer 0x');
    const second = await batch(['ticker', 'ETH']);
    expect(second).toMatchObject({ code: EXIT_OK, err: '' });
    expect(second.out).toContain('voucher recorded, no transaction; channel 0x');
    expect(second.out).toMatch(/4000 charged of \d+ deposited/);
  });

  it.each([
    { argv: [], problem: 'no command given' },
    { argv: ['ticker'], problem: 'ticker takes exactly one symbol' },
    { argv: ['ticker', 'BTC', 'ETH'], problem: 'ticker takes exactly one symbol' },
    { argv: ['tickers'], problem: 'tickers takes a comma list' },
    { argv: ['all', 'BTC'], problem: 'all takes no arguments' },
    { argv: ['price', 'BTC'], problem: 'unknown command "price"' },
  ])('$argv: usage on stderr, exit 2, nothing requested or paid', async ({ argv, problem }) => {
    const before = await balances();
    const result = await client(argv);
    expect(result.code).toBe(EXIT_USAGE);
    expect(result.out).toBe('');
    expect(result.err).toContain(problem);
    expect(result.err).toContain('usage: npm run client -- <command>');
    expect(await balances()).toEqual(before);
  });

  it('help prints the usage on stdout', async () => {
    expect(await client(['--help'])).toMatchObject({ code: EXIT_OK, err: '' });
  });

  it.each([
    { argv: ['ticker', 'NOPE'], status: 404, code: 'unknown_symbol' },
    { argv: ['ticker', 'b$c'], status: 400, code: 'invalid_symbol' },
    { argv: ['tickers', 'BTC'], status: 400, code: 'invalid_symbol_list' },
    { argv: ['ticker', '../../health/live'], status: 400, code: 'invalid_symbol' },
  ])('$argv: status and problem on stderr, exit 1, not charged', async (c) => {
    const before = await balances();
    const result = await client(c.argv);
    expect(result.code).toBe(EXIT_FAILED);
    expect(result.err).toContain(`HTTP ${c.status}`);
    expect(result.err).toContain(`"code": "${c.code}"`);
    expect(result.out).not.toContain('paid');
    expect(await balances()).toEqual(before);
  });

  it('says so when the API cannot be reached', async () => {
    const server = await listening(() => undefined);
    const url = urlOf(server);
    await close(server);
    const result = await run(['all'], { apiUrl: url, privateKey: buyerKey });
    expect(result.code).toBe(EXIT_FAILED);
    expect(result.err).toMatch(/Request failed: .*ECONNREFUSED/);
  });

  it('says where to get an API when none is configured', async () => {
    const result = await run(['all'], { env: {}, stateFile: '/nonexistent/.sandbox.json' });
    expect(result.code).toBe(EXIT_FAILED);
    expect(result.err).toContain('npm run sandbox');
    expect(result.err).toContain('API_URL and BUYER_PRIVATE_KEY');
  });
});

describe('sandbox venue decision (loopback servers only)', () => {
  const servers: Server[] = [];

  afterAll(async () => {
    await Promise.all(servers.map(close));
  });

  async function server(handler: Parameters<typeof createServer>[1]): Promise<string> {
    const started = await listening(handler);
    servers.push(started);
    return urlOf(started);
  }

  it('counts only venues answering 2xx within the time-out', async () => {
    const ok = await server((_req, res) => res.writeHead(200).end('{"products":[]}'));
    const failing = await server((_req, res) => res.writeHead(503).end());
    const hanging = await server(() => undefined);
    const gone = await listening(() => undefined);
    const goneUrl = urlOf(gone);
    await close(gone);

    const started = Date.now();
    const reachability = await probeVenues(
      { coinbase: `${ok}/api`, kraken: failing, bitstamp: hanging, other: goneUrl },
      300,
    );
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(reachability).toEqual({ coinbase: true, kraken: false, bitstamp: false, other: false });
  });

  it('goes live with the answering venues only when they can reach the quorum', () => {
    expect(chooseVenues({ coinbase: true, kraken: true, bitstamp: false }, 2)).toMatchObject({
      mode: 'live',
      markets: ['coinbase', 'kraken'],
    });
    expect(chooseVenues({ coinbase: true, kraken: true, bitstamp: true }, 2)).toMatchObject({
      mode: 'live',
      markets: ['coinbase', 'kraken', 'bitstamp'],
    });
    expect(chooseVenues({ coinbase: true, kraken: false, bitstamp: false }, 2)).toMatchObject({
      mode: 'recorded',
      reason: expect.stringContaining('only coinbase answered') as unknown,
    });
    expect(chooseVenues({ coinbase: false, kraken: false, bitstamp: false }, 1)).toMatchObject({
      mode: 'recorded',
      reason: 'no market venue answered (coinbase, kraken, bitstamp)',
    });
  });
});

describe('npm run sandbox (scripts/sandbox.ts) with no venue answering', () => {
  let sandbox: Sandbox;
  let dir: string;
  let stateFile: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'sandbox-'));
    stateFile = path.join(dir, '.sandbox.json');
    sandbox = await startOfflineSandbox(stateFile);
  });

  afterAll(async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves recorded prices and says so loudly', () => {
    expect(sandbox.venues.mode).toBe('recorded');
    expect(sandbox.pricedAssets).toBeGreaterThan(0);
    const printed = describeSandbox(sandbox);
    expect(printed).toContain('RECORDED PRICES - NOT LIVE MARKET DATA');
    expect(printed).toContain('no market venue answered');
    expect(printed).toContain(sandbox.state.buyerPrivateKey);
    expect(printed).toContain('THROW-AWAY LOCAL KEY');
    expect(printed).toContain(`${sandbox.state.apiUrl}/docs`);
    expect(printed).toContain('npm run client -- ticker BTC');
  });

  it('says on /docs and /v1/sources that its chain, its USDC and its prices are test ones', async () => {
    const document = (await (await fetch(`${sandbox.state.apiUrl}/openapi.json`)).json()) as {
      info: { description: string };
    };
    expect(document.info.description).toMatch(
      /^\*\*Local test stack: payments settle on a throw-away local chain in test USDC .*Prices are NOT live: replayed from market data recorded on \d{4}-\d{2}-\d{2}\.\*\*\n\n/,
    );
    const sources = (await (await fetch(`${sandbox.state.apiUrl}/v1/sources`)).json()) as {
      notice: string | null;
    };
    expect(sources.notice).toMatch(
      /^Local test stack: .*nothing here is paid for real\. Prices are NOT live/,
    );
  });

  it('leaves a state file the client pays from', async () => {
    expect(readSandboxState(stateFile)).toEqual(sandbox.state);
    expect(sandbox.state).toMatchObject({ chainId: 84532, pid: process.pid, venues: 'recorded' });

    const result = await run(['ticker', 'BTC'], { env: {}, stateFile });
    expect(result).toMatchObject({ code: EXIT_OK, err: '' });
    expectRecordedPrice(result.out, 'BTC');
    expect(result.out).toContain(`paid 0.002 USDC (2000 atomic) to ${sandbox.state.payTo}`);
    expect(result.out).toMatch(TX_HASH);
  });

  it('stops the app and the chain and removes the state file on close', async () => {
    const { apiUrl, rpcUrl } = sandbox.state;
    await sandbox.close();
    expect(existsSync(stateFile)).toBe(false);
    await expect(fetch(`${apiUrl}/health/live`)).rejects.toThrow();
    await expect(
      fetch(rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      }),
    ).rejects.toThrow();
  });
});

function listening(handler: Parameters<typeof createServer>[1]): Promise<Server> {
  const server = createServer(handler);
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve(server);
    });
  });
}

function urlOf(server: Server): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => {
    server.close(() => {
      resolve();
    });
  });
}
