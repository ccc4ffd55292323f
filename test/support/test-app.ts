import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { CreateAppOptions } from '../../src/app.js';
import { PriceRefreshService } from '../../src/aggregation/price-refresh.service.js';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/app-config.js';

/** Test defaults: the timer stays out of a test's way (tests call refresh()), short venue time-outs. */
const TEST_ENV: Record<string, string> = {
  HOST: '127.0.0.1',
  PORT: '0',
  LOG_LEVEL: 'error',
  PRICE_REFRESH_MS: '50000',
  MARKET_TIMEOUT_MS: '1000',
  // no test reaches a real venue's stream; stream tests point MARKET_<ID>_STREAM_URL at fakes
  MARKET_STREAMS: 'none',
  // Payments: the in-process facilitator; tests that pay point X402_RPC_URL at their anvil.
  X402_FACILITATOR: 'embedded',
  // both schemes, so every suite also runs with batch-settlement offered (it is opt-in)
  X402_SCHEMES: 'exact,batch-settlement',
  X402_NETWORK: 'base-sepolia',
  X402_PAY_TO: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  X402_SETTLER_PRIVATE_KEY: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcac478cbed5efcae7',
  X402_RPC_URL: 'http://127.0.0.1:9',
};

export interface RunningApp {
  readonly app: NestFastifyApplication;
  readonly url: string;
  /** Runs one refresh round now, as the timer would. */
  refresh(): Promise<void>;
  get(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/** The real application, listening on a loopback port, configured through env variables. */
export async function startApp(
  env: Record<string, string> = {},
  features: CreateAppOptions['features'] = [],
  logDestination?: CreateAppOptions['logDestination'],
): Promise<RunningApp> {
  // batch-settlement channel state: a fresh directory per app, removed on close, unless the test
  // shares one
  const ownBatchDir =
    env['X402_BATCH_DATA_DIR'] === undefined
      ? mkdtempSync(path.join(os.tmpdir(), 'x402-price-api-channels-'))
      : undefined;
  const removeOwnBatchDir = (): void => {
    if (ownBatchDir !== undefined) rmSync(ownBatchDir, { recursive: true, force: true });
  };
  let app: NestFastifyApplication | undefined;
  try {
    app = await createApp({
      config: loadConfig({
        ...TEST_ENV,
        ...(ownBatchDir === undefined ? {} : { X402_BATCH_DATA_DIR: ownBatchDir }),
        ...env,
      }),
      // TEST_LOG=1: the app's own logger (errors, TEST_ENV's LOG_LEVEL), when a failure needs them;
      // `logDestination`: the test reads the app's log lines
      ...(logDestination !== undefined
        ? { logDestination }
        : process.env['TEST_LOG'] === '1'
          ? {}
          : { logger: false as const }),
      features,
    });
    await app.listen(0, '127.0.0.1');
  } catch (error) {
    await app?.close();
    removeOwnBatchDir();
    throw error;
  }
  const running = app; // set: the closures below need it narrowed
  const url = (await running.getUrl()).replace('[::1]', '127.0.0.1');
  return {
    app: running,
    url,
    refresh: async () => {
      await running.get(PriceRefreshService).refresh();
    },
    get: (path, init) => fetch(`${url}${path}`, init),
    close: async () => {
      await running.close();
      removeOwnBatchDir();
    },
  };
}
