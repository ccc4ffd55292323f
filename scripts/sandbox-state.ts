/**
 * `.sandbox.json`: what a running sandbox tells `npm run client` (API URL, throw-away buyer key,
 * chain). Written once the sandbox is serving, removed when it stops; gitignored.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { StartupError } from '../src/common/startup-error.js';
import { projectRoot } from '../test/support/project-root.js';
import type { SandboxSolanaState } from './sandbox-solana.js';

export const SANDBOX_STATE_FILE = '.sandbox.json';

export interface SandboxState {
  readonly apiUrl: string;
  readonly rpcUrl: string;
  readonly chainId: number;
  /** The token the sandbox is paid in (the local test USDC at the Base Sepolia address). */
  readonly usdc: `0x${string}`;
  readonly payTo: `0x${string}`;
  readonly buyerAddress: `0x${string}`;
  /** A key generated for this run only, funded on the local chain; never reuse it. */
  readonly buyerPrivateKey: `0x${string}`;
  readonly venues: 'live' | 'recorded';
  /** The Solana side (`npm run client -- --network solana`), when the local stack has one. */
  readonly solana?: SandboxSolanaState;
  /** The sandbox process, so a later run removes only its own file. */
  readonly pid: number;
}

export function defaultStatePath(): string {
  return path.join(projectRoot(), SANDBOX_STATE_FILE);
}

export function writeSandboxState(file: string, state: SandboxState): void {
  // write-then-rename: a client starting at this moment never reads half a file
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

/** The state a sandbox left, or undefined when there is none (or it is unreadable). */
export function readSandboxState(file: string): SandboxState | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  return isSandboxState(parsed) ? parsed : undefined;
}

/** Removes the file only if the sandbox `pid` wrote it, so a second sandbox cannot delete the first's. */
export function removeSandboxState(file: string, pid: number): void {
  if (readSandboxState(file)?.pid === pid) rmSync(file, { force: true });
}

/**
 * Refuses to start a local stack whose state file another live stack owns: writing it would point
 * `npm run client` away from that stack, and stopping this one would delete it.
 */
export function assertStateFileFree(file: string): void {
  const owner = readSandboxState(file);
  if (owner === undefined || owner.pid === process.pid || !isAlive(owner.pid)) return;
  throw new StartupError(
    `Another local stack (pid ${owner.pid}, ${owner.apiUrl}) owns ${file}: stop it, or give ` +
      'this one its own state file and port, e.g. PORT=3001 SANDBOX_STATE_FILE=.sandbox-3001.json ' +
      '(npm run client reads SANDBOX_STATE_FILE too).',
  );
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user
    return (error as { code?: unknown }).code === 'EPERM';
  }
}

function isSandboxState(value: unknown): value is SandboxState {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  const strings = ['apiUrl', 'rpcUrl', 'usdc', 'payTo', 'buyerAddress', 'buyerPrivateKey'];
  return (
    strings.every((key) => typeof record[key] === 'string') &&
    typeof record['chainId'] === 'number' &&
    typeof record['pid'] === 'number'
  );
}
