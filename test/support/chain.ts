/**
 * A real local EVM chain for end-to-end payment tests.
 *
 * `startLocalChain()` runs anvil (from the `@foundry-rs/anvil-linux-amd64` npm package, or
 * `anvil` on PATH) on a free loopback port with chain id 84532, so the chain looks like Base
 * Sepolia to x402 clients: the EIP-3009 test token (contracts/TestUSDC.sol) is installed with
 * `anvil_setCode` at the Base Sepolia USDC address and a Multicall3 (contracts/Multicall3.sol) at
 * its canonical address, which the x402 facilitator needs to explain failed payments. The
 * `batch-settlement` channel contract (contracts/BatchSettlement.sol) and its EIP-3009 deposit
 * collector (contracts/Erc3009DepositCollector.sol) are installed at the addresses the x402 SDK
 * uses for that scheme.
 *
 * The contracts are compiled with the `solc` npm package on first use and cached under
 * node_modules/.cache/x402-price-api/, keyed by a hash of the sources and compiler settings.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
  type Abi,
  type Address,
  type Chain,
  type Hex,
  type HttpTransport,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createNonceManager, jsonRpc } from 'viem/nonce';

/** Base Sepolia USDC; the test token's runtime code is placed here. */
export const BASE_SEPOLIA_USDC_ADDRESS: Address = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
/** The canonical Multicall3 address (same on every chain). */
export const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';
/** The x402 batch-settlement channel contract, at the address the SDK uses on every chain. */
export const BATCH_SETTLEMENT_ADDRESS: Address = '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003';
/** The batch-settlement EIP-3009 deposit collector, at the address the SDK uses on every chain. */
export const ERC3009_DEPOSIT_COLLECTOR_ADDRESS: Address =
  '0x4020806089470a89826cB9fB1f4059150b550004';
/** Base Sepolia's chain id, the default for `startLocalChain`. */
export const BASE_SEPOLIA_CHAIN_ID = 84532;

/** How many of anvil's dev keys `LocalChain.accounts` lists; the last dev key mints. */
const LISTED_ACCOUNTS = 9;
/** anvil generates this many dev accounts; the last one is reserved for `mintUsdc`. */
const DEV_ACCOUNTS = LISTED_ACCOUNTS + 1;
const STARTUP_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;
const POLLING_INTERVAL_MS = 10;

const ANVIL_PACKAGE = '@foundry-rs/anvil-linux-amd64';
const CACHE_DIR_PARTS = ['node_modules', '.cache', 'x402-price-api'] as const;

export interface ContractArtifact {
  readonly abi: Abi;
  /** Creation code (constructor + runtime), 0x-prefixed. */
  readonly bytecode: Hex;
  /** Runtime code, as installed with `anvil_setCode`, 0x-prefixed. */
  readonly deployedBytecode: Hex;
}

/** Compiled contracts by contract name (`TestUSDC`, `Multicall3`, ...). */
export type ContractArtifacts = Readonly<Record<string, ContractArtifact>>;

/**
 * For `intervalMiningSeconds` where one key settles concurrently. With automine alone, anvil
 * 1.7.1 can leave a transaction that arrived ahead of a lower nonce unmined in its pool, and
 * every later one from that key behind it (foundry-rs/foundry#10122): those settlements then wait
 * for nothing until their deadline. A block a second mines them. A nonce gap left by the app
 * still shows: no block mines a queued transaction.
 */
export const STRANDED_TRANSACTION_SWEEP_SECONDS = 1;

export interface StartLocalChainOptions {
  /** Chain id anvil reports; defaults to 84532 (Base Sepolia). */
  chainId?: number;
  /**
   * Also mine a block every this many seconds besides one per transaction (anvil's mixed
   * mining; see STRANDED_TRANSACTION_SWEEP_SECONDS). Off by default: some suites keep
   * transactions unmined on purpose.
   */
  intervalMiningSeconds?: number;
}

export interface LocalChain {
  /** http://127.0.0.1:<port> */
  readonly rpcUrl: string;
  readonly chainId: number;
  /** Where the test token lives: the Base Sepolia USDC address. */
  readonly usdcAddress: Address;
  readonly multicall3Address: Address;
  /** The batch-settlement channel contract and its EIP-3009 deposit collector. */
  readonly batchSettlementAddress: Address;
  readonly erc3009DepositCollectorAddress: Address;
  /** viem public client bound to this chain, polling every 10 ms. */
  readonly publicClient: PublicClient<HttpTransport, Chain>;
  /**
   * Private keys of anvil's funded dev accounts #0..#8 (10,000 ETH each). By convention #0
   * settles payments (the facilitator) and #1 receives them. Dev account #9 is not listed: it
   * sends the `mintUsdc` transactions, so it never competes for a nonce with a listed key.
   */
  readonly accounts: readonly Hex[];
  /** Mints `atomicAmount` (6 decimals: 1 USDC = 1_000_000n) of the test token to `to`; resolves once mined. */
  mintUsdc(to: Address, atomicAmount: bigint): Promise<void>;
  /** The test token balance of `address`, in atomic units. */
  usdcBalance(address: Address): Promise<bigint>;
  /** Stops anvil. Idempotent; resolves once the process has exited. */
  stop(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// anvil binary

/**
 * The anvil executable: the binary shipped in the `@foundry-rs/anvil-linux-amd64` npm package
 * if it is installed, otherwise `anvil` found on PATH.
 */
export function findAnvilBinary(): string {
  try {
    const packageJson = createRequire(import.meta.url).resolve(`${ANVIL_PACKAGE}/package.json`);
    const candidate = path.join(path.dirname(packageJson), 'bin', 'anvil');
    if (existsSync(candidate)) return candidate;
  } catch {
    // not installed (it is an optional dependency): fall through to PATH
  }
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, 'anvil');
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(
    `anvil not found: neither the npm package ${ANVIL_PACKAGE} (node_modules/${ANVIL_PACKAGE}/bin/anvil; ` +
      'an optional dependency, installed only on linux x64) nor an `anvil` executable on PATH ' +
      '(install Foundry: https://getfoundry.sh).',
  );
}

// ---------------------------------------------------------------------------------------------
// contracts

interface SolcModule {
  compile(input: string): string;
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage?: string; message: string }[];
  contracts?: Record<
    string,
    Record<
      string,
      { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }
    >
  >;
}

const SOLC_SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  // anvil's default hardfork is newer; cancun keeps the code runnable on older local nodes too.
  evmVersion: 'cancun',
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
} as const;

let artifactsInMemory: { key: string; artifacts: ContractArtifacts } | undefined;

/** The project root: the nearest directory above `start` holding contracts/TestUSDC.sol. */
function findUp(start: string): string | undefined {
  let dir = path.resolve(start);
  for (;;) {
    if (existsSync(path.join(dir, 'contracts', 'TestUSDC.sol'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function projectRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  let viaSolc: string | undefined;
  try {
    // resolves through symlinks, so this also works from a compiled copy of this file elsewhere
    viaSolc = path.dirname(createRequire(import.meta.url).resolve('solc/package.json'));
  } catch {
    viaSolc = undefined;
  }
  const root =
    findUp(here) ?? (viaSolc === undefined ? undefined : findUp(viaSolc)) ?? findUp(process.cwd());
  if (root === undefined) {
    throw new Error(`contracts/TestUSDC.sol not found above ${here} or ${process.cwd()}`);
  }
  return root;
}

function solcVersion(root: string): string {
  const require = createRequire(path.join(root, 'package.json'));
  const pkg = JSON.parse(readFileSync(require.resolve('solc/package.json'), 'utf8')) as {
    version?: unknown;
  };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}

function toHex(object: string): Hex {
  return `0x${object.replace(/^0x/, '')}`;
}

/**
 * Compiles contracts/*.sol with the `solc` npm package (standard JSON, optimizer on) and returns
 * ABI + creation and runtime bytecode per contract. The result is cached in
 * node_modules/.cache/x402-price-api/contracts-<hash>.json, the hash covering the sources, the
 * compiler version and the settings, so repeated runs skip the (slow) compiler.
 */
export function compileContracts(): ContractArtifacts {
  const root = projectRoot();
  const contractsDir = path.join(root, 'contracts');
  const files = readdirSync(contractsDir)
    .filter((file) => file.endsWith('.sol'))
    .sort();
  const sources: Record<string, { content: string }> = {};
  for (const file of files) {
    sources[file] = { content: readFileSync(path.join(contractsDir, file), 'utf8') };
  }

  const key = createHash('sha256')
    .update(JSON.stringify({ solc: solcVersion(root), settings: SOLC_SETTINGS, sources }))
    .digest('hex')
    .slice(0, 32);
  if (artifactsInMemory?.key === key) return artifactsInMemory.artifacts;

  const cacheDir = path.join(root, ...CACHE_DIR_PARTS);
  const cacheFile = path.join(cacheDir, `contracts-${key}.json`);
  if (existsSync(cacheFile)) {
    try {
      const artifacts = JSON.parse(readFileSync(cacheFile, 'utf8')) as ContractArtifacts;
      artifactsInMemory = { key, artifacts };
      return artifacts;
    } catch {
      // unreadable or half-written cache: recompile below
    }
  }

  const solc = createRequire(path.join(root, 'package.json'))('solc') as SolcModule;
  const output = JSON.parse(
    solc.compile(JSON.stringify({ language: 'Solidity', sources, settings: SOLC_SETTINGS })),
  ) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) {
    throw new Error(
      `Solidity compilation failed:\n${errors.map((e) => e.formattedMessage ?? e.message).join('\n')}`,
    );
  }

  const artifacts: Record<string, ContractArtifact> = {};
  for (const byName of Object.values(output.contracts ?? {})) {
    for (const [name, contract] of Object.entries(byName)) {
      artifacts[name] = {
        abi: contract.abi,
        bytecode: toHex(contract.evm.bytecode.object),
        deployedBytecode: toHex(contract.evm.deployedBytecode.object),
      };
    }
  }

  mkdirSync(cacheDir, { recursive: true });
  // write-then-rename: concurrent test workers never read a half-written file
  const tmp = `${cacheFile}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, JSON.stringify(artifacts));
  renameSync(tmp, cacheFile);
  artifactsInMemory = { key, artifacts };
  return artifacts;
}

function artifact(artifacts: ContractArtifacts, name: string): ContractArtifact {
  const found = artifacts[name];
  if (found === undefined || found.deployedBytecode === '0x') {
    throw new Error(`contract ${name} missing from the compiled artifacts (contracts/${name}.sol)`);
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// process handling

/**
 * anvil runs under a tiny Node watchdog. The watchdog reads its stdin, a pipe from this process:
 * when this process dies in any way (even SIGKILL) the pipe closes and the watchdog kills anvil.
 * It prints anvil's pid first so that `stop()` and the exit hook can also kill anvil directly.
 */
const WATCHDOG_SOURCE = `
const { spawn } = require('node:child_process');
const [bin, ...args] = JSON.parse(process.argv[1]);
const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
const kill = () => { try { child.kill('SIGKILL'); } catch {} };
process.stdout.write('WATCHDOG_CHILD_PID ' + child.pid + '\\n');
child.stdout.pipe(process.stdout);
child.stderr.pipe(process.stderr);
child.on('error', (e) => { process.stderr.write(String(e) + '\\n'); process.exit(127); });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
process.stdin.on('end', kill);
process.stdin.on('close', kill);
process.stdin.on('error', kill);
process.stdout.on('error', kill); // EPIPE once the parent is gone
process.stderr.on('error', kill);
process.on('uncaughtException', () => { kill(); process.exit(1); });
process.stdin.resume();
process.on('SIGTERM', kill);
process.on('SIGINT', kill);
`;

interface RunningProcess {
  readonly watchdog: ChildProcess;
  anvilPid: number | undefined;
}

const running = new Set<RunningProcess>();
let exitHookInstalled = false;

function killQuietly(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const proc of running) {
      killQuietly(proc.anvilPid);
      killQuietly(proc.watchdog.pid);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// the chain

/** A set-up call to the local chain; bounded, but generous for a loaded machine's anvil. */
function rpc(rpcUrl: string, method: string, params: unknown[] = []): Promise<unknown> {
  return fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  })
    .then((res) => res.json() as Promise<{ result?: unknown; error?: { message?: string } }>)
    .then((body) => {
      if (body.error !== undefined) {
        throw new Error(`${method} failed: ${body.error.message ?? JSON.stringify(body.error)}`);
      }
      return body.result;
    });
}

/** Starts anvil on a free loopback port and resolves with its URL and dev keys. */
async function spawnAnvil(
  chainId: number,
  intervalMiningSeconds: number | undefined,
): Promise<{ proc: RunningProcess; rpcUrl: string; keys: Hex[] }> {
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    '0', // anvil picks a free port and prints it: no race between choosing and binding
    '--chain-id',
    String(chainId),
    '--accounts',
    String(DEV_ACCOUNTS),
    // anvil writes every state older than its in-memory window to ~/.foundry/anvil/tmp and removes
    // them only on a clean exit; a killed anvil leaves them (about 80 MB per thousand blocks, 2 GB
    // per bench run). Nothing here reads state that old, so none is written.
    '--max-persisted-states',
    '0',
    ...(intervalMiningSeconds === undefined
      ? []
      : ['--mixed-mining', '--block-time', String(intervalMiningSeconds)]),
  ];
  const watchdog = spawn(
    process.execPath,
    ['-e', WATCHDOG_SOURCE, JSON.stringify([findAnvilBinary(), ...args])],
    // the environment as this process sees it now (under Jest, a test's own copy of it)
    { stdio: ['pipe', 'pipe', 'pipe'], env: process.env },
  );
  const proc: RunningProcess = { watchdog, anvilPid: undefined };
  running.add(proc);
  installExitHook();

  let output = '';
  const keys: Hex[] = [];
  try {
    const rpcUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        fail(new Error(`anvil did not start within ${STARTUP_TIMEOUT_MS} ms`));
      }, STARTUP_TIMEOUT_MS);
      const fail = (error: Error): void => {
        clearTimeout(timer);
        reject(new Error(`${error.message}\n--- anvil output ---\n${output.slice(-4_000)}`));
      };
      const onData = (chunk: Buffer): void => {
        output += chunk.toString('utf8');
        const pid = /WATCHDOG_CHILD_PID (\d+)/.exec(output);
        if (pid?.[1] !== undefined) proc.anvilPid = Number(pid[1]);
        const listening = /Listening on (127\.0\.0\.1:\d+)/.exec(output);
        if (listening?.[1] !== undefined) {
          clearTimeout(timer);
          resolve(`http://${listening[1]}`);
        }
      };
      watchdog.stdout.on('data', onData);
      watchdog.stderr.on('data', onData);
      watchdog.on('error', fail);
      watchdog.on('exit', (code, signal) => {
        fail(
          new Error(
            `anvil exited during start-up (code ${code ?? 'null'}, signal ${signal ?? 'none'})`,
          ),
        );
      });
    });

    // dev keys as printed by anvil ("(0) 0xac09...") in its "Private Keys" section
    const section = output.split('Private Keys')[1]?.split('Wallet')[0] ?? '';
    for (const match of section.matchAll(/\((\d+)\)\s+(0x[0-9a-fA-F]{64})/g)) {
      if (match[2] !== undefined) keys.push(match[2] as Hex);
    }
    if (keys.length < DEV_ACCOUNTS) {
      throw new Error(`could not read ${DEV_ACCOUNTS} dev keys from anvil's output`);
    }

    // the server is listening; make sure it answers JSON-RPC (bounded)
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    for (;;) {
      try {
        const reported = await rpc(rpcUrl, 'eth_chainId');
        if (reported !== `0x${chainId.toString(16)}`) {
          throw new Error(`anvil reports chain id ${String(reported)}, expected ${chainId}`);
        }
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 25));
      }
    }
    // keep draining the pipes so anvil never blocks on a full pipe buffer
    watchdog.stdout.removeAllListeners('data');
    watchdog.stderr.removeAllListeners('data');
    watchdog.stdout.resume();
    watchdog.stderr.resume();
    watchdog.removeAllListeners('exit');
    // A chain someone forgot to stop must not keep this process alive: once it exits, the exit
    // hook (or, failing that, the closed stdin pipe) takes anvil down.
    watchdog.unref();
    for (const stream of [watchdog.stdin, watchdog.stdout, watchdog.stderr]) {
      (stream as unknown as Partial<Socket> | null)?.unref?.();
    }
    return { proc, rpcUrl, keys };
  } catch (error) {
    await stopProcess(proc);
    throw error;
  }
}

async function stopProcess(proc: RunningProcess): Promise<void> {
  const { watchdog } = proc;
  killQuietly(proc.anvilPid);
  if (watchdog.exitCode === null && watchdog.signalCode === null) {
    const exited = new Promise<void>((resolve) => {
      watchdog.once('exit', () => {
        resolve();
      });
    });
    watchdog.stdin?.end();
    watchdog.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => {
        resolve('timeout');
      }, STOP_TIMEOUT_MS);
    });
    if ((await Promise.race([exited, timedOut])) === 'timeout') {
      killQuietly(watchdog.pid);
      await exited;
    }
    clearTimeout(timer);
  }
  running.delete(proc);
}

const erc20Abi = [
  {
    type: 'function',
    name: 'balanceOf',
    stateMutability: 'view',
    inputs: [{ name: 'account', type: 'address' }],
    outputs: [{ name: '', type: 'uint256' }],
  },
  {
    type: 'function',
    name: 'mint',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
    ],
    outputs: [],
  },
] as const;

/**
 * Starts a fresh anvil chain (chain id 84532 unless told otherwise) with the test token at the
 * Base Sepolia USDC address and Multicall3 at its canonical address. Always `stop()` it.
 */
export async function startLocalChain(options: StartLocalChainOptions = {}): Promise<LocalChain> {
  const chainId = options.chainId ?? BASE_SEPOLIA_CHAIN_ID;
  const artifacts = compileContracts();
  const usdc = artifact(artifacts, 'TestUSDC');
  const multicall = artifact(artifacts, 'Multicall3');
  const batchSettlement = artifact(artifacts, 'BatchSettlement');
  const depositCollector = artifact(artifacts, 'Erc3009DepositCollector');

  const { proc, rpcUrl, keys } = await spawnAnvil(chainId, options.intervalMiningSeconds);
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopped ??= stopProcess(proc));

  try {
    await rpc(rpcUrl, 'anvil_setCode', [BASE_SEPOLIA_USDC_ADDRESS, usdc.deployedBytecode]);
    await rpc(rpcUrl, 'anvil_setCode', [MULTICALL3_ADDRESS, multicall.deployedBytecode]);
    await rpc(rpcUrl, 'anvil_setCode', [
      BATCH_SETTLEMENT_ADDRESS,
      batchSettlement.deployedBytecode,
    ]);
    await rpc(rpcUrl, 'anvil_setCode', [
      ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
      depositCollector.deployedBytecode,
    ]);

    const chain = defineChain({
      id: chainId,
      name: `anvil-${chainId}`,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [rpcUrl] } },
      contracts: { multicall3: { address: MULTICALL3_ADDRESS } },
    });
    const transport = http(rpcUrl);
    const publicClient = createPublicClient({
      chain,
      transport,
      pollingInterval: POLLING_INTERVAL_MS,
    });

    // The minter is anvil dev account #9, which is not handed out in `accounts`. It gets a nonce
    // manager of its own (not viem's process-wide `nonceManager`, whose memory of earlier nonces
    // would outlive this chain), so concurrent mints never collide.
    const minterKey = keys[DEV_ACCOUNTS - 1];
    if (minterKey === undefined) throw new Error('anvil dev key for the minter is missing');
    const minter = createWalletClient({
      chain,
      transport,
      pollingInterval: POLLING_INTERVAL_MS,
      account: privateKeyToAccount(minterKey, {
        nonceManager: createNonceManager({ source: jsonRpc() }),
      }),
    });

    const localChain: LocalChain = {
      rpcUrl,
      chainId,
      usdcAddress: BASE_SEPOLIA_USDC_ADDRESS,
      multicall3Address: MULTICALL3_ADDRESS,
      batchSettlementAddress: BATCH_SETTLEMENT_ADDRESS,
      erc3009DepositCollectorAddress: ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
      publicClient,
      accounts: keys.slice(0, LISTED_ACCOUNTS),
      async mintUsdc(to: Address, atomicAmount: bigint): Promise<void> {
        const hash = await minter.writeContract({
          address: BASE_SEPOLIA_USDC_ADDRESS,
          abi: erc20Abi,
          functionName: 'mint',
          args: [getAddress(to), atomicAmount],
        });
        const receipt = await publicClient.waitForTransactionReceipt({ hash });
        if (receipt.status !== 'success') throw new Error(`mint transaction ${hash} reverted`);
      },
      usdcBalance(address: Address): Promise<bigint> {
        return publicClient.readContract({
          address: BASE_SEPOLIA_USDC_ADDRESS,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [getAddress(address)],
        });
      },
      stop,
    };
    return localChain;
  } catch (error) {
    await stop();
    throw error;
  }
}
