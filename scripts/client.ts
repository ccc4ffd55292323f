/**
 * `npm run client -- [--batch] ticker BTC | tickers BTC,ETH | all | ohlc BTC 1h | price-at BTC <time>`:
 * buys one answer from the
 * price API with `@x402/fetch` and prints the body, what was paid, the settlement transaction and
 * whether the answer's Price-Attestation is the published signer's signature over its prices.
 * `--batch` pays through a batch-settlement payment channel instead (a deposit on first use, a
 * signed voucher after), keeping the channel's state in .x402-channels/. `--mcp` buys the same
 * answer as a paid MCP tool call on `POST /mcp` (scripts/mcp-client.ts); the two combine.
 * `--network solana` pays on Solana (exact only: refused with `--batch` or `--mcp`).
 * The API and the paying key come from API_URL / BUYER_PRIVATE_KEY, else from the
 * .sandbox.json a running `npm run sandbox` writes.
 */
import {
  BatchSettlementEvmScheme,
  type BatchSettlementDepositStrategy,
} from '@x402/evm/batch-settlement/client';
import { FileClientChannelStorage } from '@x402/evm/batch-settlement/client/file-storage';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import path from 'node:path';
import { x402Client } from '@x402/fetch';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { isEntryPoint } from './entry-point.js';
import { buyOverMcp } from './mcp-client.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, buyAndPrint } from './paid-get.js';
import { SANDBOX_STATE_FILE, defaultStatePath, readSandboxState } from './sandbox-state.js';
import { buyOnSolana } from './solana-client.js';
import { streamAndPrint } from './stream-client.js';
import { parseStreamArgs, type StreamCommand } from './stream-command.js';

export { EXIT_OK, EXIT_FAILED, EXIT_USAGE };
/** Where `--batch` keeps its channels (beside the sandbox state file). */
export const CHANNELS_DIR = '.x402-channels';

export const USAGE = `usage: npm run client -- <command> [--batch] [--mcp] [--network solana]

options:
  --batch                     pay through a batch-settlement payment channel: a deposit on
                              first use, then a signed voucher per call and no chain round trip
                              (channel state in ${CHANNELS_DIR}/)
  --mcp                       buy it as a paid MCP tool call (the command's route's tool:
                              get_ticker, get_markets, get_ohlc, ...) on POST /mcp, through
                              the MCP SDK's client, its attestation checked as over HTTP
  --network solana            pay in USDC on Solana (the sandbox's Solana buyer, or
                              SOLANA_BUYER_KEY and SOLANA_RPC_URL; scripts/solana-client.ts)

--batch and --mcp combine (a paid MCP tool call through a channel); --network solana takes
neither (exact payments over HTTP only) and is refused with them, before anything is paid.

commands:
  ticker <SYMBOL>             one USD price                 e.g. ticker BTC
  tickers <SYMBOL,SYMBOL...>  2 to 5 prices, in that order  e.g. tickers BTC,ETH
  all                         every asset priced right now
  ohlc <SYMBOL> [INTERVAL] [START] [END]
                              candles (1m 5m 15m 1h 4h 1d; times ISO 8601 or Unix seconds;
                              default the last 100)         e.g. ohlc BTC 1h
  price-at <SYMBOL> <TIME>    the price at a past moment    e.g. price-at BTC 2026-01-01T00:00:00Z
  markets <SYMBOL,SYMBOL...>  1-25 prices and 24 h figures  e.g. markets BTC,ETH
  stream <SYMBOL,...> --budget <USD> [--min-move-bps N] [--max-hz N]
                              every price change, paid per update through a channel, until
                              the budget is used up or Ctrl-C  e.g. stream BTC,ETH --budget 0.01

Each command pays for one request in USDC with @x402/fetch. The API URL and the paying key
are API_URL and BUYER_PRIVATE_KEY, or else those of the running \`npm run sandbox\`
(${SANDBOX_STATE_FILE}).`;

export interface ClientOptions {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** Base URL of the API; else API_URL in `env`, else the sandbox state file. */
  readonly apiUrl?: string;
  /** The paying key (0x + 64 hex); else BUYER_PRIVATE_KEY in `env`, else the sandbox state file. */
  readonly privateKey?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** .sandbox.json in the project root unless told otherwise. */
  readonly stateFile?: string;
  readonly fetch?: typeof fetch;
  /** `--batch` channel state; CHANNELS_DIR in the project root unless told otherwise. */
  readonly channelsDir?: string;
  /** `stream` ends (printing its total) when this aborts: Ctrl-C. */
  readonly interrupt?: AbortSignal;
}

export type Command =
  | {
      readonly kind: 'request';
      readonly path: string;
      readonly batch?: boolean;
      readonly mcp?: boolean;
      readonly network?: 'solana';
    }
  | StreamCommand
  | { readonly kind: 'help' }
  | { readonly kind: 'invalid'; readonly problem: string }
  /** A combination of options no buyer here can honour: one line, no usage, nothing paid. */
  | { readonly kind: 'refused'; readonly problem: string };

/** The route a command buys; symbols are escaped so an argument can never leave its segment. */
export function parseCommand(argv: readonly string[]): Command {
  const batch = argv.includes('--batch');
  const mcp = argv.includes('--mcp');
  const at = argv.indexOf('--network');
  if (at !== -1 && argv[at + 1] !== 'solana') return invalid('--network takes solana');
  if (at !== -1 && (batch || mcp)) {
    const asked = [batch ? '--batch' : '', mcp ? '--mcp' : ''].filter(Boolean).join(' and ');
    return {
      kind: 'refused',
      problem:
        `--network solana cannot be combined with ${asked}: the Solana buyer pays exact over ` +
        'HTTP only (no channel, no MCP); nothing was paid.',
    };
  }
  if (argv[0] === 'stream' && (mcp || at !== -1)) {
    return {
      kind: 'refused',
      problem:
        'stream always pays through a batch-settlement channel over HTTP (--batch is implied): ' +
        '--mcp and --network solana cannot buy it (a stream is no MCP tool); nothing was paid.',
    };
  }
  const rest = at === -1 ? argv : [...argv.slice(0, at), ...argv.slice(at + 2)];
  const command = parseRequest(rest.filter((arg) => arg !== '--batch' && arg !== '--mcp'));
  if (command.kind !== 'request') return command;
  const options = { ...(batch ? { batch } : {}), ...(mcp ? { mcp } : {}) };
  return { ...command, ...options, ...(at === -1 ? {} : { network: 'solana' as const }) };
}

function parseRequest(argv: readonly string[]): Command {
  const [name, ...args] = argv;
  switch (name) {
    case 'ticker':
      if (args.length !== 1 || args[0] === '') {
        return invalid('ticker takes exactly one symbol, e.g. ticker BTC');
      }
      return { kind: 'request', path: `/v1/ticker/${encodeURIComponent(args[0] ?? '')}` };
    case 'tickers': {
      // `tickers BTC,ETH` and `tickers BTC ETH` mean the same; the API checks the list
      const symbols = args.flatMap((arg) => arg.split(','));
      if (args.length === 0) return invalid('tickers takes a comma list, e.g. tickers BTC,ETH');
      return { kind: 'request', path: `/v1/tickers/${symbols.map(encodeURIComponent).join(',')}` };
    }
    case 'markets': {
      const symbols = args.flatMap((arg) => arg.split(','));
      if (args.length === 0) return invalid('markets takes a comma list, e.g. markets BTC,ETH');
      return { kind: 'request', path: `/v1/markets/${symbols.map(encodeURIComponent).join(',')}` };
    }
    case 'stream': {
      const stream = parseStreamArgs(args);
      return typeof stream === 'string' ? invalid(stream) : stream;
    }
    case 'all':
      if (args.length > 0) return invalid('all takes no arguments');
      return { kind: 'request', path: '/v1/all-tickers' };
    case 'ohlc': {
      const [symbol = '', interval, start, end] = args;
      if (symbol === '' || args.length > 4) {
        return invalid(
          'ohlc takes a symbol, then an interval, start and end if wanted, e.g. ohlc BTC 1h',
        );
      }
      const query = new URLSearchParams();
      if (interval !== undefined) query.set('interval', interval);
      if (start !== undefined) query.set('start', start);
      if (end !== undefined) query.set('end', end);
      const search = query.size === 0 ? '' : `?${query.toString()}`;
      return { kind: 'request', path: `/v1/ohlc/${encodeURIComponent(symbol)}${search}` };
    }
    case 'price-at':
      if (args.length !== 2 || args[0] === '' || args[1] === '') {
        return invalid(
          'price-at takes a symbol and a time, e.g. price-at BTC 2026-01-01T00:00:00Z',
        );
      }
      return {
        kind: 'request',
        path: `/v1/price-at/${encodeURIComponent(args[0] ?? '')}?${new URLSearchParams({ t: args[1] ?? '' }).toString()}`,
      };
    case 'help':
    case '--help':
    case '-h':
      return { kind: 'help' };
    case undefined:
      return invalid('no command given');
    default:
      return invalid(`unknown command "${name}"`);
  }
}

function invalid(problem: string): Command {
  return { kind: 'invalid', problem };
}

interface Target {
  readonly apiUrl: string;
  readonly privateKey: Hex;
}

/** Explicit options first, then the environment, then the state of a running sandbox. */
export function resolveTarget(options: ClientOptions): Target | string {
  const env = options.env ?? {};
  let apiUrl = options.apiUrl ?? env['API_URL'];
  let privateKey = options.privateKey ?? env['BUYER_PRIVATE_KEY'];
  if (apiUrl === undefined || privateKey === undefined) {
    const file = options.stateFile ?? defaultStatePath();
    const state = readSandboxState(file);
    apiUrl ??= state?.apiUrl;
    privateKey ??= state?.buyerPrivateKey;
    if (apiUrl === undefined || privateKey === undefined) {
      return (
        `No API to pay: start \`npm run sandbox\` (it writes ${file}) ` +
        'or set API_URL and BUYER_PRIVATE_KEY.'
      );
    }
  }
  if (!/^https?:\/\/[^/]/.test(apiUrl)) return `API_URL must be an http(s) URL (got "${apiUrl}")`;
  if (!/^0x[0-9a-fA-F]{64}$/.test(privateKey)) {
    return 'BUYER_PRIVATE_KEY must be 0x followed by 64 hex digits';
  }
  return { apiUrl: apiUrl.replace(/\/+$/, ''), privateKey: privateKey as Hex };
}

/** Runs one command and returns the process exit code; all output goes through `out`/`err`. */
export async function runClient(argv: readonly string[], options: ClientOptions): Promise<number> {
  const command = parseCommand(argv);
  switch (command.kind) {
    case 'help':
      options.out(USAGE);
      return EXIT_OK;
    case 'invalid':
      options.err(`${command.problem}\n\n${USAGE}`);
      return EXIT_USAGE;
    case 'refused':
      options.err(command.problem);
      return EXIT_USAGE;
    case 'request':
    case 'stream':
      break;
  }
  if (command.kind === 'request' && command.network === 'solana') {
    return buyOnSolana(command.path, options);
  }
  const target = resolveTarget(options);
  if (typeof target === 'string') {
    options.err(target);
    return EXIT_FAILED;
  }
  if (command.kind === 'stream') {
    const buyer = `buyer ${privateKeyToAccount(target.privateKey).address}`;
    const scheme = (depositStrategy: BatchSettlementDepositStrategy) =>
      payingScheme(target.privateKey, options, true, depositStrategy);
    return streamAndPrint(command, target.apiUrl, scheme, channelStorage(options), buyer, options);
  }
  if (command.mcp === true) {
    const payer = new x402Client().register(
      'eip155:*',
      payingScheme(target.privateKey, options, command.batch === true),
    );
    return buyOverMcp(target.apiUrl, target.privateKey, command.path, payer, options);
  }
  return buy(
    `${target.apiUrl}${command.path}`,
    `${target.apiUrl}/.well-known/price-attestation`,
    target.privateKey,
    options,
    command.batch === true,
  );
}

async function buy(
  url: string,
  attestationInfoUrl: string,
  privateKey: Hex,
  options: ClientOptions,
  batch: boolean,
): Promise<number> {
  const account = privateKeyToAccount(privateKey);
  const client = new x402Client().register('eip155:*', payingScheme(privateKey, options, batch));
  return buyAndPrint(client, url, attestationInfoUrl, `buyer ${account.address}`, options);
}

/**
 * The buyer's x402 scheme: `exact`, or batch-settlement with its channels kept on disk (and its
 * deposits sized by `depositStrategy` when given).
 */
export function payingScheme(
  privateKey: Hex,
  options: ClientOptions,
  batch: boolean,
  depositStrategy?: BatchSettlementDepositStrategy,
) {
  const account = privateKeyToAccount(privateKey);
  return batch
    ? new BatchSettlementEvmScheme(account, {
        ...(depositStrategy === undefined ? {} : { depositStrategy }),
        storage: channelStorage(options),
      })
    : new ExactEvmScheme(account);
}

/** The buyer's batch-settlement channels on disk. */
function channelStorage(options: ClientOptions): FileClientChannelStorage {
  return new FileClientChannelStorage({
    directory:
      options.channelsDir ??
      path.join(path.dirname(options.stateFile ?? defaultStatePath()), CHANNELS_DIR),
  });
}

if (isEntryPoint(import.meta.url)) {
  const stateFile = process.env['SANDBOX_STATE_FILE'];
  const interrupt = new AbortController();
  // a stream stops on Ctrl-C with its total; any other command keeps Node's default
  if (process.argv[2] === 'stream') {
    process.once('SIGINT', () => {
      interrupt.abort();
    });
  }
  runClient(process.argv.slice(2), {
    interrupt: interrupt.signal,
    env: process.env,
    // the state file of a stack started with SANDBOX_STATE_FILE (another port)
    ...(stateFile === undefined || stateFile === '' ? {} : { stateFile }),
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
  })
    .then((code) => {
      process.exitCode = code;
    })
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = EXIT_FAILED;
    });
}
