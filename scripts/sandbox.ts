/**
 * `npm run sandbox`: the whole paid service on this machine. A local anvil that looks like Base
 * Sepolia (test USDC at the real address, Multicall3), a funded throw-away buyer, market venues
 * (live when they answer, recorded replays otherwise) and the app settling payments in-process.
 * Writes .sandbox.json for `npm run client` and runs until Ctrl-C.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { formatUnits, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { PriceRefreshService } from '../src/aggregation/price-refresh.service.js';
import { createApp } from '../src/app.js';
import { DEFAULT_MIN_SOURCES } from '../src/aggregation/pricing.settings.js';
import { loadConfig } from '../src/app-config.js';
import { HTTP_SETTINGS, type HttpSettings } from '../src/common/server.settings.js';
import { StartupError } from '../src/common/startup-error.js';
import { ConfigError } from '../src/config/settings.js';
import {
  startLocalChain,
  STRANDED_TRANSACTION_SWEEP_SECONDS,
  type LocalChain,
} from '../test/support/chain.js';
import { FIXTURE_MOMENT_MS, type FakeMarkets } from '../test/support/fake-markets.js';
import type { PriceWalk } from '../test/support/price-walk.js';
import { isEntryPoint } from './entry-point.js';
import { installSandboxWallet } from './sandbox-wallet.js';
import { solanaRows, startSandboxSolana, type SandboxSolana } from './sandbox-solana.js';
import { priceWalkFrom, startVenues } from './sandbox-venues.js';
import {
  assertStateFileFree,
  defaultStatePath,
  removeSandboxState,
  writeSandboxState,
  type SandboxState,
} from './sandbox-state.js';
import {
  chooseVenues,
  liveVenueEndpoints,
  probeVenues,
  type Reachability,
  type VenueChoice,
} from './venue-choice.js';

export type VenueMode = 'auto' | 'live' | 'recorded';
export const VENUE_MODES: readonly VenueMode[] = ['auto', 'live', 'recorded'];

/** 100 USDC in atomic units (6 decimals): enough for tens of thousands of requests. */
export const BUYER_FUNDS = 100_000_000n;
const USDC_DECIMALS = 6;
/** If shutting down hangs, leave anyway: the chain's exit hook still kills anvil. */
const SHUTDOWN_DEADLINE_MS = 10_000;

export interface SandboxOptions {
  /** Where PORT, HOST, LOG_LEVEL and the PRICE_* knobs are read; process.env by default. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** `auto` probes the real venues; `live`/`recorded` skip the probe. */
  readonly venues?: VenueMode;
  /** How `auto` learns which venues answer; one short request to each real venue by default. */
  readonly probe?: () => Promise<Reachability>;
  /** Where the state for `npm run client` goes; .sandbox.json in the project root by default. */
  readonly stateFile?: string;
  /** USDC, in atomic units, minted to the buyer. */
  readonly buyerFunds?: bigint;
  /** Recorded venues' prices follow this walk (started with the stack); as recorded without. */
  readonly priceWalk?: PriceWalk;
}

export interface Sandbox {
  readonly state: SandboxState;
  readonly venues: VenueChoice;
  readonly settlerAddress: Hex;
  readonly buyerFunds: bigint;
  /** The Solana side, or why the stack has none. */
  readonly solana: SandboxSolana | string;
  readonly stateFile: string;
  /** X402_BATCH_DATA_DIR: the shell's, or a directory of this stack's own, removed when it stops. */
  readonly channelsDir: string;
  /** The app's LOG_LEVEL (`warn` unless the shell sets one): which access lines it writes. */
  readonly logLevel: string;
  /** Assets the first price round could price (0: requests answer 503 until venues answer). */
  readonly pricedAssets: number;
  /** The recorded venues on loopback (none with live venues). */
  readonly markets: FakeMarkets | undefined;
  /** The walk the recorded prices follow, if they move. */
  readonly priceWalk: PriceWalk | undefined;
  /** Stops the app, the venues and the chain and removes the state file. Idempotent. */
  close(): Promise<void>;
}

type Closer = () => Promise<void> | void;

/** Starts everything in order; whatever started is stopped again if a later step fails. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const env = options.env ?? process.env;
  const stateFile = options.stateFile ?? defaultStatePath();
  const buyerFunds = options.buyerFunds ?? BUYER_FUNDS;
  const closers: Closer[] = [];
  assertStateFileFree(stateFile);
  try {
    const channelsDir = ownChannelsDir(env, closers);
    const venues = await decideVenues(options, env);
    // several clients may pay at once, settled from one key
    const chain = await startLocalChain({
      intervalMiningSeconds: STRANDED_TRANSACTION_SWEEP_SECONDS,
    });
    closers.push(() => chain.stop());
    const { settlerKey, payTo } = roles(chain);
    const buyerKey = generatePrivateKey();
    const buyerAddress = privateKeyToAccount(buyerKey).address;
    await chain.mintUsdc(buyerAddress, buyerFunds);
    const solana = await startSandboxSolana(buyerFunds);
    if (typeof solana !== 'string') closers.push(() => solana.close());

    const walk = venues.mode === 'recorded' ? options.priceWalk : undefined;
    const { env: marketEnv, markets } = await startVenues(venues, closers, env, walk);
    const appEnv = appEnvironment(env, marketEnv, chain.rpcUrl, settlerKey, payTo);
    const app = await createApp({
      config: loadConfig({
        ...appEnv,
        X402_BATCH_DATA_DIR: channelsDir,
        ...(typeof solana === 'string' ? {} : solana.env),
      }),
      notice: localStackNotice(venues),
      localBuyer: true,
    });
    closers.push(() => app.close());
    installSandboxWallet(app, buyerKey, chain.chainId);
    const apiUrl = await listen(app);
    const pricedAssets = await firstPriceRound(app);

    const state: SandboxState = {
      apiUrl,
      rpcUrl: chain.rpcUrl,
      chainId: chain.chainId,
      usdc: chain.usdcAddress,
      payTo,
      buyerAddress,
      buyerPrivateKey: buyerKey,
      venues: venues.mode,
      pid: process.pid,
      ...(typeof solana === 'string' ? {} : { solana: solana.state }),
    };
    writeSandboxState(stateFile, state);
    closers.push(() => {
      removeSandboxState(stateFile, process.pid);
    });

    let closing: Promise<void> | undefined;
    return {
      state,
      venues,
      settlerAddress: privateKeyToAccount(settlerKey).address,
      buyerFunds,
      solana,
      stateFile,
      channelsDir,
      logLevel: appEnv['LOG_LEVEL'] ?? 'warn',
      pricedAssets,
      markets,
      priceWalk: walk,
      close: () => (closing ??= runClosers(closers)),
    };
  } catch (error) {
    await runClosers(closers);
    throw error;
  }
}

/**
 * The operator's environment (PORT, HOST, LOG_LEVEL, PRICE_*) under the sandbox's own venues
 * and payment settings: embedded facilitator, Base Sepolia's default USDC, this chain.
 */
function appEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  marketEnv: Record<string, string>,
  rpcUrl: string,
  settlerKey: Hex,
  payTo: Hex,
): Record<string, string | undefined> {
  return {
    ...env,
    LOG_LEVEL: env['LOG_LEVEL'] ?? 'warn',
    PORT: env['PORT'] ?? '3000',
    HOST: env['HOST'] ?? '127.0.0.1',
    ...marketEnv,
    X402_FACILITATOR: 'embedded',
    X402_NETWORK: 'base-sepolia',
    // the local chain has this project's channel contracts: both schemes to try
    X402_SCHEMES: env['X402_SCHEMES'] ?? 'exact,batch-settlement',
    X402_RPC_URL: rpcUrl,
    // anvil mines at once: ask for receipts often so a purchase takes milliseconds
    X402_RECEIPT_POLL_MS: '50',
    X402_SETTLER_PRIVATE_KEY: settlerKey,
    X402_PAY_TO: payTo,
    // the local stack's own attestation key, unless the shell brings one
    ATTESTATION_PRIVATE_KEY: env['ATTESTATION_PRIVATE_KEY'] ?? generatePrivateKey(),
    // a token override from the shell would point the paywall away from the local test USDC
    X402_ASSET_ADDRESS: undefined,
    X402_ASSET_NAME: undefined,
    X402_ASSET_VERSION: undefined,
    X402_ASSET_DECIMALS: undefined,
  };
}

/**
 * The stack's batch-settlement channel directory. Its chain is new each run, so channels kept from
 * an earlier one name a chain that is gone, and another stack on this checkout holds the shared
 * default: a directory of its own, removed when it stops, unless the shell names one.
 */
function ownChannelsDir(
  env: Readonly<Record<string, string | undefined>>,
  closers: Closer[],
): string {
  const given = env['X402_BATCH_DATA_DIR'];
  if (given !== undefined && given !== '') return given;
  const dir = mkdtempSync(path.join(tmpdir(), 'sandbox-channels-'));
  closers.push(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** By convention dev account #0 settles (pays gas) and #1 receives the payments. */
function roles(chain: LocalChain): { settlerKey: Hex; payTo: Hex } {
  const [settlerKey, payToKey] = chain.accounts;
  if (settlerKey === undefined || payToKey === undefined)
    throw new Error('anvil listed no dev keys');
  return { settlerKey, payTo: privateKeyToAccount(payToKey).address };
}

async function decideVenues(
  options: SandboxOptions,
  env: Readonly<Record<string, string | undefined>>,
): Promise<VenueChoice> {
  switch (options.venues ?? 'auto') {
    case 'recorded':
      return { mode: 'recorded', reason: 'recorded data was asked for (SANDBOX_VENUES=recorded)' };
    case 'live':
      return {
        mode: 'live',
        markets: Object.keys(liveVenueEndpoints()),
        reason: 'live venues were asked for (SANDBOX_VENUES=live)',
      };
    case 'auto': {
      const probe = options.probe ?? (() => probeVenues(liveVenueEndpoints()));
      return chooseVenues(await probe(), quorumFrom(env));
    }
  }
}

/** PRICE_MIN_SOURCES as the app will read it; a bad value is reported later by loadConfig. */
function quorumFrom(env: Readonly<Record<string, string | undefined>>): number {
  const configured = Number.parseInt(env['PRICE_MIN_SOURCES'] ?? '', 10);
  return Number.isInteger(configured) && configured > 0 ? configured : DEFAULT_MIN_SOURCES;
}

async function listen(app: NestFastifyApplication): Promise<string> {
  const { host, port } = app.get<HttpSettings>(HTTP_SETTINGS.token);
  await app.listen(port, host);
  const bound = (app.getHttpServer().address() as AddressInfo).port;
  // a wildcard listen address is not somewhere a client can connect to
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${bound}`;
}

/** Joins the round the app started at boot, so the first client request finds prices. */
async function firstPriceRound(app: NestFastifyApplication): Promise<number> {
  const snapshot = await app.get(PriceRefreshService).refresh();
  return snapshot.prices.size;
}

/** Runs the closers newest first; one failing does not keep the others (the chain) running. */
async function runClosers(closers: readonly Closer[]): Promise<void> {
  const failures: unknown[] = [];
  for (const close of [...closers].reverse()) {
    try {
      await close();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw new AggregateError(failures, 'sandbox shutdown failed');
}

// ---------------------------------------------------------------------------------------------
// what the operator sees

/** What /docs and /v1/sources say about the local stack: its chain, USDC and maybe prices are test ones. */
export function localStackNotice(venues: VenueChoice): string {
  const chain =
    'Local test stack: payments settle on a throw-away local chain in test USDC minted for ' +
    'this run; nothing here is paid for real.';
  if (venues.mode === 'live') return `${chain} Prices are live, from ${venues.markets.join(', ')}.`;
  const recordedOn = new Date(FIXTURE_MOMENT_MS).toISOString().slice(0, 10);
  return `${chain} Prices are NOT live: replayed from market data recorded on ${recordedOn}.`;
}

/** The loud notice that prices are replays, not the market. */
export function recordedBanner(reason: string): string {
  const recordedOn = new Date(FIXTURE_MOMENT_MS).toISOString().slice(0, 10);
  const lines = [
    'RECORDED PRICES - NOT LIVE MARKET DATA',
    '',
    `Why: ${reason}.`,
    `Every price is replayed from responses recorded on ${recordedOn}`,
    '(test/fixtures/markets) by fake venues on loopback, with fresh timestamps.',
    'Payments are real transactions, but on a local chain with test USDC.',
  ];
  const width = Math.max(...lines.map((line) => line.length)) + 4;
  const bar = '!'.repeat(width + 2);
  return [bar, ...lines.map((line) => `!  ${line.padEnd(width - 2)}!`), bar].join('\n');
}

/** The loud notice that nothing here is paid for real, and how to sell for real instead. */
export function localChainBanner(): string {
  const lines = [
    'LOCAL TEST CHAIN - NOTHING HERE IS PAID FOR REAL',
    '',
    'Payments settle on a throw-away anvil chain, in test USDC minted for this run;',
    'everything stops and is forgotten on Ctrl-C.',
    '',
    'To sell for real, say who is paid and start again:',
    '  X402_PAY_TO=0xYourAddress npm start',
    '    Base Sepolia through the public x402.org facilitator (testnet USDC)',
    '  X402_PAY_TO=0xYourAddress X402_NETWORK=base X402_FACILITATOR=cdp \\',
    '    CDP_API_KEY_ID=... CDP_API_KEY_SECRET=... npm start',
    '    Base mainnet, real USDC, through Coinbase CDP (README: Configuration)',
  ];
  const width = Math.max(...lines.map((line) => line.length)) + 4;
  const bar = '#'.repeat(width + 2);
  return [bar, ...lines.map((line) => `#  ${line.padEnd(width - 2)}#`), bar].join('\n');
}

/** Which access lines a LOG_LEVEL writes: a 5xx answer's at `warn`, every other at `log`. */
export function accessLinesOf(level: string): string {
  const more = '; LOG_LEVEL=log writes one for every request';
  if (level === 'warn') return `LOG_LEVEL=warn: access lines for 5xx answers only${more}`;
  if (level === 'error' || level === 'fatal') return `LOG_LEVEL=${level}: no access lines${more}`;
  return `LOG_LEVEL=${level}: an access line for every request`;
}

export function describeSandbox(sandbox: Sandbox): string {
  const { state, venues } = sandbox;
  const walk = sandbox.priceWalk;
  const moving =
    walk === undefined
      ? ''
      : `, moving ±${walk.stepBps / 100} % every ${walk.intervalMs} ms within ±${walk.boundBps / 100} %`;
  const venueLine =
    venues.mode === 'recorded'
      ? `RECORDED replays on loopback (not live prices${moving})`
      : `LIVE: ${venues.markets.join(', ')}`;
  const prices =
    sandbox.pricedAssets > 0
      ? `${sandbox.pricedAssets} assets priced`
      : 'NO PRICES YET: paid routes answer 503 until venues agree';
  const rows: [string, string][] = [
    ['API', state.apiUrl],
    ['Swagger UI', `${state.apiUrl}/docs`],
    ['OpenAPI', `${state.apiUrl}/openapi.json`],
    ['chain RPC', `${state.rpcUrl}  (anvil, chain id ${state.chainId}, looks like Base Sepolia)`],
    ['USDC', `${state.usdc}  (local EIP-3009 test token at the Base Sepolia USDC address)`],
    ['payTo', `${state.payTo}  (anvil dev account #1)`],
    ['settler', `${sandbox.settlerAddress}  (anvil dev account #0, pays the gas)`],
    [
      'buyer',
      `${state.buyerAddress}  (${formatUnits(sandbox.buyerFunds, USDC_DECIMALS)} USDC, no ETH)`,
    ],
    ['buyer key', state.buyerPrivateKey],
    ['', 'THROW-AWAY LOCAL KEY generated for this run: never fund it on a real network'],
    [
      'docs wallet',
      `Try it out in ${state.apiUrl}/docs pays as this buyer when the browser has no wallet`,
    ],
    ['venues', `${venueLine}; ${venues.reason}`],
    ['prices', prices],
    ...solanaRows(sandbox.solana),
    ['state file', `${sandbox.stateFile}  (read by npm run client; removed on exit)`],
    ['logs', accessLinesOf(sandbox.logLevel)],
  ];
  const table = rows.map(([label, value]) => `  ${label.padEnd(11)} ${value}`);
  const banner = venues.mode === 'recorded' ? ['', recordedBanner(venues.reason)] : [];
  return [
    '',
    localChainBanner(),
    ...banner,
    '',
    'x402 price API sandbox is running. Ctrl-C stops everything.',
    '',
    ...table,
    '',
    'Pay for a price (in another terminal):',
    '  npm run client -- ticker BTC',
    '  npm run client -- tickers BTC,ETH',
    '  npm run client -- all',
    '  npm run client -- markets BTC,ETH',
    ...(typeof sandbox.solana === 'string'
      ? []
      : ['  npm run client -- --network solana ticker BTC']),
    '',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// command line

function venueModeFrom(value: string | undefined): VenueMode {
  const mode = (value ?? 'auto').trim().toLowerCase();
  if ((VENUE_MODES as readonly string[]).includes(mode)) return mode as VenueMode;
  throw new Error(`SANDBOX_VENUES must be one of ${VENUE_MODES.join(', ')} (got "${value ?? ''}")`);
}

/** Ctrl-C, kill or a closed terminal: stop the sandbox once, then exit. */
function stopOnSignals(sandbox: Sandbox): void {
  let stopping: Promise<void> | undefined;
  const stop = (signal: NodeJS.Signals): void => {
    // a second signal while stopping joins the first stop instead of starting another
    stopping ??= shutdown(sandbox, signal);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, stop);
}

async function shutdown(sandbox: Sandbox, signal: NodeJS.Signals): Promise<void> {
  console.log(`\n${signal}: stopping the service, the venues and the chain...`);
  setTimeout(() => {
    console.error(`Shutdown took over ${SHUTDOWN_DEADLINE_MS} ms; exiting anyway.`);
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS).unref();
  try {
    await sandbox.close();
    console.log('Sandbox stopped.');
    process.exit(0);
  } catch (error) {
    console.error('Sandbox shutdown failed:', error);
    process.exit(1);
  }
}

function explainStartFailure(error: unknown): string {
  if (error instanceof ConfigError || error instanceof StartupError) return error.message;
  if ((error as { code?: unknown } | null)?.code === 'EADDRINUSE') {
    return 'The port is already in use (another sandbox or `npm start`?). Set PORT to another port.';
  }
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** Runs the sandbox until a signal stops it; `npm run sandbox` and `npm start` without X402_PAY_TO. */
export async function serveSandbox(): Promise<void> {
  try {
    const venues = venueModeFrom(process.env['SANDBOX_VENUES']);
    if (venues === 'auto') {
      console.log('Checking whether the market venues answer (one request each, 2 s at most)...');
    }
    console.log('Starting the local chain, the venues and the service...');
    const stateFile = process.env['SANDBOX_STATE_FILE'];
    const priceWalk = priceWalkFrom(process.env['SANDBOX_PRICE_WALK']);
    const sandbox = await startSandbox({
      venues,
      ...(priceWalk === undefined ? {} : { priceWalk }),
      ...(stateFile === undefined || stateFile === '' ? {} : { stateFile }),
    });
    stopOnSignals(sandbox);
    console.log(describeSandbox(sandbox));
  } catch (error) {
    console.error(`Sandbox failed to start:\n${explainStartFailure(error)}`);
    process.exit(1);
  }
}

if (isEntryPoint(import.meta.url)) void serveSandbox();
