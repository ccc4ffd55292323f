/**
 * `npm run client` combinations no buyer can honour (`--network solana` with `--batch` or `--mcp`)
 * are refused before any request: one line, a usage exit code, nothing asked of the API. Every
 * other input a buyer needs is present and valid, so without the refusal the client would pay.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { getBase58Decoder } from '@solana/kit';
import { generatePrivateKey } from 'viem/accounts';
import { EXIT_USAGE, parseCommand, runClient } from '../scripts/client.js';
import { BUILD_TIMEOUT_MS, bareEnv, buildIfStale } from './support/built-service.js';
import { closeServer } from './support/close-server.js';
import { projectRoot } from './support/project-root.js';
import { solanaKeypair } from './support/solana-buyers.js';

const run = promisify(execFile);

const REFUSED = [
  '--network solana --batch ticker BTC',
  '--mcp --network solana ticker BTC',
  'tickers BTC,ETH --network solana --mcp --batch',
];

describe('npm run client: combinations it cannot honour', () => {
  let api: Server;
  let apiUrl: string;
  const requests: string[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    api = createServer((request, response) => {
      requests.push(`${request.method ?? ''} ${request.url ?? ''}`);
      response.writeHead(500).end();
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    const { bytes } = await solanaKeypair();
    env = {
      API_URL: apiUrl,
      BUYER_PRIVATE_KEY: generatePrivateKey(),
      SOLANA_BUYER_KEY: getBase58Decoder().decode(bytes),
      SOLANA_RPC_URL: apiUrl,
    };
    await buildIfStale();
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await closeServer(api, []);
  });

  beforeEach(() => {
    requests.length = 0;
  });

  it.each(REFUSED)('%s: refused in one line, no request made', async (line) => {
    const argv = line.split(' ');
    const out: string[] = [];
    const err: string[] = [];
    const fetched: string[] = [];
    const code = await runClient(argv, {
      env,
      out: (text) => out.push(text),
      err: (text) => err.push(text),
      stateFile: path.join(tmpdir(), 'no-such-sandbox.json'),
      fetch: (input) => {
        fetched.push(String(input instanceof Request ? input.url : input));
        return fetch(input);
      },
    });
    expect(code).toBe(EXIT_USAGE);
    expect(out).toEqual([]);
    expect(err).toHaveLength(1);
    expect(err[0]).not.toContain('\n');
    expect(err[0]).toMatch(/^--network solana cannot be combined with --(batch|mcp)/);
    expect(err[0]).toContain('nothing was paid');
    expect(fetched).toEqual([]);
    expect(requests).toEqual([]);
  });

  it('the built client refuses --network solana --batch the same way, asking nothing', async () => {
    const failure = await run(
      'node',
      [
        path.join(projectRoot(), 'dist/scripts/client.js'),
        '--network',
        'solana',
        '--batch',
        'ticker',
        'BTC',
      ],
      { cwd: tmpdir(), env: bareEnv(env), timeout: 20_000 },
    ).then(
      () => undefined,
      (error: unknown) => error as { code: number; stdout: string; stderr: string },
    );
    expect(failure?.code).toBe(EXIT_USAGE);
    expect(failure?.stdout).toBe('');
    expect(failure?.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^--network solana cannot be combined with --batch: /),
    ]);
    expect(requests).toEqual([]);
  });

  it('still takes the combinations it can honour', () => {
    expect(parseCommand(['--batch', '--mcp', 'ticker', 'BTC'])).toMatchObject({
      kind: 'request',
      batch: true,
      mcp: true,
    });
    expect(parseCommand(['--network', 'solana', 'all'])).toMatchObject({
      kind: 'request',
      path: '/v1/all-tickers',
      network: 'solana',
    });
  });
});
