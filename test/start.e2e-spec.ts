import { execFile, spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { EXIT_OK, runClient } from '../scripts/client.js';
import { planStart, SERVICE_SCRIPT } from '../scripts/start.js';
import { BUILD_TIMEOUT_MS, bareEnv, buildIfStale, servingUrl } from './support/built-service.js';
import { startLocalChain } from './support/chain.js';
import { FakeMarkets } from './support/fake-markets.js';
import { fundedBuyer } from './support/paying-clients.js';
import { projectRoot } from './support/project-root.js';
import { RpcProxy } from './support/rpc-proxy.js';
import {
  execute,
  injectWallet,
  launchChromium,
  requireChromium,
  textOf,
} from './support/swagger-ui.js';
import { paymentRequiredOf, signedPayment, v2Header } from './support/x402-payloads.js';

const run = promisify(execFile);
const ROOT = projectRoot();

/** Runs a built entry point from an empty directory (no .env) until it exits. */
async function exitOf(
  script: string,
  env: Record<string, string>,
  cwd: string,
): Promise<{ code: number; stderr: string }> {
  try {
    await run('node', [path.join(ROOT, script)], { cwd, env: bareEnv(env), timeout: 20_000 });
    return { code: 0, stderr: '' };
  } catch (error) {
    const failed = error as { code?: number; stderr?: string };
    return { code: failed.code ?? -1, stderr: failed.stderr ?? '' };
  }
}

/**
 * /health/ready right after the signal was handled. Before the listener closes the service answers 503
 * `shutting_down` (test/operations.e2e-spec.ts checks that one deterministically); while Fastify
 * drains, a request on an open connection gets its 503; after that, a connection is refused.
 */
async function readinessAfterSignal(
  url: string,
): Promise<{ status: number; code: unknown } | 'refused'> {
  try {
    const response = await fetch(`${url}/health/ready`, { headers: { connection: 'close' } });
    return { status: response.status, code: ((await response.json()) as { code?: unknown }).code };
  } catch {
    return 'refused';
  }
}

/**
 * The runtime image's layout and command, read from the Dockerfile: its last stage copies
 * package.json, node_modules and dist/src, sets ENV and runs CMD. `dir` gets the same layout
 * (dist/src copied, node_modules linked), so the service runs with nothing else of the project.
 */
function asTheImageRunsIt(dir: string): {
  command: string;
  args: string[];
  env: Record<string, string>;
} {
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const lastStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const cmd = /^CMD (\[.*\])$/m.exec(lastStage)?.[1];
  if (cmd === undefined) throw new Error('the Dockerfile has no CMD in exec form');
  const [command, ...args] = JSON.parse(cmd) as string[];
  const env = Object.fromEntries(
    [...lastStage.matchAll(/^ENV (\w+)=(\S+)$/gm)].map((match) => [match[1]!, match[2]!]),
  );
  const copied = [...lastStage.matchAll(/^COPY --from=\w+ \/app\/(\S+) /gm)].map((m) => m[1]!);
  expect(copied.sort()).toEqual(['dist/src', 'node_modules', 'package.json']);
  cpSync(path.join(ROOT, 'dist/src'), path.join(dir, 'dist/src'), { recursive: true });
  cpSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return { command: command!, args, env };
}

/**
 * The service as `npm start` runs it, from `cwd` (no .env), on a free loopback port, logging
 * JSON, priced from the fake venues, with the embedded facilitator; `env` adds the rest.
 */
function spawnService(
  cwd: string,
  markets: FakeMarkets,
  env: Record<string, string>,
): ChildProcessByStdio<null, Readable, Readable> {
  return spawn('node', [path.join(ROOT, SERVICE_SCRIPT)], {
    cwd,
    env: bareEnv({
      ...markets.env(),
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'log',
      LOG_FORMAT: 'json',
      X402_FACILITATOR: 'embedded',
      ...env,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/**
 * The document with each 402 example's `resource` reduced to its path: the example is the
 * challenge of the process serving it, so its origin is that process's port.
 */
function withoutOrigins(document: unknown): unknown {
  const stripped = (text: string): string =>
    text.replace(/"(resource|url)":"http:\/\/[^/"]+/g, '"$1":"');
  // a PAYMENT-REQUIRED header example is base64 JSON naming the resource URL too
  const decoded = JSON.stringify(document, (key, value: unknown) =>
    key === 'example' && typeof value === 'string' && value.startsWith('eyJ')
      ? stripped(Buffer.from(value, 'base64').toString('utf8'))
      : value,
  );
  return JSON.parse(stripped(decoded));
}

describe('what npm start runs', () => {
  it.each([
    [{}, 'local'],
    [{ X402_PAY_TO: '' }, 'local'],
    [{ NODE_ENV: 'development' }, 'local'],
    [{ X402_PAY_TO: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C' }, 'service'],
    [
      { X402_PAY_TO: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', NODE_ENV: 'production' },
      'service',
    ],
    [{ NODE_ENV: 'production' }, 'refuse'],
  ])('%j → %s', (env, kind) => {
    expect(planStart(env).kind).toBe(kind);
  });
});

describe('npm start, built and run as a process', () => {
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'npm-start-'));
    // what `npm start` does before it runs: build to dist/ unless the build is up to date
    await buildIfStale();
  }, BUILD_TIMEOUT_MS);

  it('builds only when a source is newer than the last build', async () => {
    const stamp = path.join(ROOT, 'dist/.build-stamp');
    const built = statSync(stamp).mtimeMs;
    const started = Date.now();
    await buildIfStale();
    expect(statSync(stamp).mtimeMs).toBe(built);
    // the compiler alone takes tens of seconds
    expect(Date.now() - started).toBeLessThan(BUILD_TIMEOUT_MS / 4);
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses in production without X402_PAY_TO, naming the variable', async () => {
    const started = await exitOf('dist/scripts/start.js', { NODE_ENV: 'production' }, dir);
    expect(started.code).toBe(1);
    expect(started.stderr).toContain('X402_PAY_TO is required with NODE_ENV=production');
  });

  it('the service entry point (the container) refuses without X402_PAY_TO too', async () => {
    const started = await exitOf(SERVICE_SCRIPT, { NODE_ENV: 'production' }, dir);
    expect(started.code).toBe(1);
    expect(started.stderr).toContain('X402_PAY_TO is required');
  });

  it('the service as the Dockerfile runs it serves the committed OpenAPI document, and Swagger UI "Try it out" answers a free and a paid operation in a browser', async () => {
    requireChromium();
    const image = mkdtempSync(path.join(dir, 'image-'));
    const { command, args, env } = asTheImageRunsIt(image);
    const chain = await startLocalChain();
    const markets = await FakeMarkets.start();
    // the committed document's seller
    const payTo = '0x0000000000000000000000000000000000000001';
    const service = spawn(command, args, {
      cwd: image,
      env: bareEnv({
        ...env,
        ...markets.env(),
        HOST: '127.0.0.1',
        PORT: '0',
        X402_FACILITATOR: 'embedded',
        X402_NETWORK: 'base-sepolia',
        X402_PAY_TO: payTo,
        X402_SETTLER_PRIVATE_KEY: chain.accounts[0]!,
        X402_RPC_URL: chain.rpcUrl,
        X402_BATCH_DATA_DIR: mkdtempSync(path.join(dir, 'channels-')),
        // the image runs with NODE_ENV=production, where the attestation key is required
        ATTESTATION_PRIVATE_KEY: `0x${'5e'.repeat(32)}`,
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => service.once('exit', resolve));
    const browser = await launchChromium();
    try {
      const url = await servingUrl(service);
      const served: unknown = await (await fetch(`${url}/openapi.json`)).json();
      const committed: unknown = JSON.parse(readFileSync(path.join(ROOT, 'openapi.json'), 'utf8'));
      expect(withoutOrigins(served)).toEqual(withoutOrigins(committed));
      for (const until = Date.now() + 30_000; ;) {
        if ((await fetch(`${url}/health/ready`)).status === 200) break;
        if (Date.now() > until) throw new Error('the service never became ready');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const buyer = await fundedBuyer(chain);
      const page = await browser.newPage();
      const failures: string[] = [];
      page.on('pageerror', (error) => failures.push(String(error)));
      await injectWallet(page, { buyer, chainId: chain.chainId }, []);
      await page.goto(`${url}/docs`);
      expect(await execute(page, 'listAssets')).toBe('200');
      const before = await chain.usdcBalance(payTo);
      expect(await execute(page, 'getTicker')).toBe('200');
      expect(await chain.usdcBalance(payTo)).toBe(before + 2000n);
      expect(await textOf(page, '[id$="-getTicker"] .x402-receipt .x402-receipt-text')).toMatch(
        /transaction 0x[0-9a-f]{64}/,
      );
      expect(failures).toEqual([]);
    } finally {
      await browser.close();
      service.kill('SIGTERM');
      await exited;
      await markets.close();
      await chain.stop();
    }
  }, 90_000);

  describe('with no payment settings', () => {
    let child: ChildProcess;
    let output = '';
    let apiUrl: string;
    const stateFile = (): string => path.join(dir, '.sandbox.json');

    beforeAll(async () => {
      child = spawn('node', [path.join(ROOT, 'dist/scripts/start.js')], {
        cwd: dir,
        env: bareEnv({
          PORT: '0',
          LOG_LEVEL: 'error',
          // recorded venues: the test never asks a public host
          SANDBOX_VENUES: 'recorded',
          SANDBOX_STATE_FILE: stateFile(),
        }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      apiUrl = await new Promise<string>((resolve, reject) => {
        const collect = (chunk: Buffer): void => {
          output += chunk.toString();
          const url = /^\s+API\s+(http:\/\/\S+)$/m.exec(output)?.[1];
          if (url !== undefined && output.includes('npm run client -- all')) resolve(url);
        };
        child.stdout?.on('data', collect);
        child.stderr?.on('data', collect);
        child.once('exit', (code) => {
          reject(new Error(`npm start exited (${String(code)}):\n${output}`));
        });
      });
    }, 60_000);

    afterAll(async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      await exited;
    });

    it('says loudly that it is a local test chain, and how to sell for real', () => {
      expect(output).toContain('X402_PAY_TO is not set: starting the local test stack');
      expect(output).toContain('LOCAL TEST CHAIN - NOTHING HERE IS PAID FOR REAL');
      expect(output).toContain('X402_PAY_TO=0xYourAddress npm start');
      expect(output).toContain('RECORDED PRICES - NOT LIVE MARKET DATA');
    });

    it('serves the free routes and answers the paid ones with a 402', async () => {
      expect((await fetch(`${apiUrl}/v1/assets`)).status).toBe(200);
      const challenge = await fetch(`${apiUrl}/v1/ticker/BTC`);
      expect(challenge.status).toBe(402);
      expect(challenge.headers.get('payment-required')).toBeTruthy();
    });

    it('is paid by npm run client with the funded buyer it leaves', async () => {
      const out: string[] = [];
      const code = await runClient(['ticker', 'BTC'], {
        env: {},
        stateFile: stateFile(),
        out: (text) => out.push(text),
        err: (text) => out.push(text),
      });
      expect(code).toBe(EXIT_OK);
      expect(out.join('\n')).toMatch(/"BTC": \d+(\.\d+)?/);
      expect(out.join('\n')).toMatch(/settlement tx 0x[0-9a-f]{64} on eip155:84532/);
    });

    it('sells the same price as an MCP tool: npm run client -- --mcp ticker BTC', async () => {
      const out: string[] = [];
      const code = await runClient(['--mcp', 'ticker', 'BTC'], {
        env: {},
        stateFile: stateFile(),
        out: (text) => out.push(text),
        err: (text) => out.push(text),
      });
      expect(code).toBe(EXIT_OK);
      expect(out.join('\n')).toContain('MCP get_ticker {"symbol":"BTC"}');
      expect(out.join('\n')).toMatch(/"BTC": \d+(\.\d+)?/);
      expect(out.join('\n')).toMatch(/settlement tx 0x[0-9a-f]{64} on eip155:84532/);
    });

    it('stops on Ctrl-C and removes its state file', async () => {
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(existsSync(stateFile())).toBe(false);
    });
  });

  it('SIGTERM during a slow settlement: not ready at once, the paid request gets its 200 and its transfer, then exit 0; JSON logs carry the request id', async () => {
    const chain = await startLocalChain();
    const markets = await FakeMarkets.start();
    const proxy = await RpcProxy.start(chain.rpcUrl);
    const payTo = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
    const service = spawnService(dir, markets, {
      X402_NETWORK: 'base-sepolia',
      X402_PAY_TO: payTo,
      X402_SETTLER_PRIVATE_KEY: chain.accounts[0]!,
      X402_RPC_URL: proxy.url,
    });
    let output = '';
    let stdout = '';
    // after 'exit', once its output is read to the end
    const closed = new Promise((resolve) => service.once('close', resolve));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      service.once('exit', (code, signal) => {
        resolve({ code, signal });
      }),
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const collect = (chunk: Buffer): void => {
          output += chunk.toString();
          const found = /Serving on (http:\/\/\S+?) /.exec(output)?.[1];
          if (found !== undefined) resolve(found.replace('[::1]', '127.0.0.1'));
        };
        service.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          collect(chunk);
        });
        service.stderr.on('data', collect);
        void exited.then(() => {
          reject(new Error(`the service exited:\n${output}`));
        });
      });
      for (const until = Date.now() + 30_000; ;) {
        if ((await fetch(`${url}/health/ready`)).status === 200) break;
        if (Date.now() > until) throw new Error(`never ready:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const buyer = await fundedBuyer(chain);
      const accepted = paymentRequiredOf(await fetch(`${url}/v1/ticker/BTC`)).accepts[0]!;
      const payment = await signedPayment(buyer.account, accepted);
      const before = await chain.usdcBalance(payTo);
      proxy.fail('eth_sendRawTransaction', { kind: 'delay', ms: 1500 });
      const requestId = 'paid-during-sigterm-1';
      const paid = fetch(`${url}/v1/ticker/BTC`, {
        headers: { ...v2Header(payment), 'x-request-id': requestId },
      });
      while (!proxy.calls.includes('eth_sendRawTransaction')) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      service.kill('SIGTERM');
      // the signal is handled asynchronously: probe once the service says it is stopping
      while (!output.includes('SIGTERM: finishing requests in flight')) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const probe = await readinessAfterSignal(url);
      const response = await paid;
      expect(response.status).toBe(200);
      expect(response.headers.get('x-request-id')).toBe(requestId);
      expect(await chain.usdcBalance(payTo)).toBe(before + BigInt(accepted.amount));
      expect(await exited).toEqual({ code: 0, signal: null });
      // never ready again: our 503 `shutting_down`, Fastify's 503 while it drains, or no listener
      expect(probe === 'refused' ? 'refused' : String(probe.status)).toMatch(/^(503|refused)$/);

      await closed;
      const lines = stdout.split('\n').filter((line) => line !== '');
      const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      for (const record of records) {
        expect(typeof record['level']).toBe('string');
        expect(new Date(String(record['time'])).toISOString()).toBe(record['time']);
        expect(record['message']).toBeDefined();
      }
      const sale = records.find((record) => record['message'] === 'payment settled');
      expect(sale).toMatchObject({
        requestId,
        payer: buyer.account.address,
        route: '/v1/ticker/:symbol',
        amount: accepted.amount,
        scheme: 'exact',
      });
      expect(String(sale?.['transaction'])).toMatch(/^0x[0-9a-f]{64}$/);
      expect(stdout).not.toContain(payment.payload['signature'] as string);
    } finally {
      if (service.exitCode === null) service.kill('SIGKILL');
      await proxy.close();
      await markets.close();
      await chain.stop();
    }
  }, 90_000);
});
