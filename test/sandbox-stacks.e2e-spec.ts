/**
 * Several local stacks on one checkout: each has its own channel directory and state file, and
 * stopping one leaves the other's files alone; a stack asked to take the state file of another
 * live one refuses in one line before starting anything.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readSandboxState } from '../scripts/sandbox-state.js';
import { accessLinesOf, describeSandbox, startSandbox, type Sandbox } from '../scripts/sandbox.js';
import { StartupError } from '../src/common/startup-error.js';
import { startOfflineSandbox } from './support/offline-sandbox.js';

describe('several local stacks on one checkout', () => {
  let dir: string;
  const stacks: Sandbox[] = [];
  let other: ChildProcess | undefined;

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sandbox-stacks-'));
  });

  afterAll(async () => {
    for (const stack of stacks) await stack.close();
    other?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('two stacks run side by side; stopping the second leaves the first its files', async () => {
    const first = await startOfflineSandbox(path.join(dir, 'first.json'));
    stacks.push(first);
    const second = await startOfflineSandbox(path.join(dir, 'second.json'));
    stacks.push(second);

    expect(first.channelsDir).not.toBe(second.channelsDir);
    expect(existsSync(first.channelsDir)).toBe(true);
    expect(existsSync(second.channelsDir)).toBe(true);
    expect(first.state.apiUrl).not.toBe(second.state.apiUrl);

    await second.close();
    expect(existsSync(second.stateFile)).toBe(false);
    expect(existsSync(second.channelsDir)).toBe(false);
    expect(readSandboxState(first.stateFile)?.apiUrl).toBe(first.state.apiUrl);
    expect(existsSync(first.channelsDir)).toBe(true);
    expect((await fetch(`${first.state.apiUrl}/health/live`)).status).toBe(200);
    // the offline stack runs at LOG_LEVEL=error: its banner says so, and how to see requests
    expect(first.logLevel).toBe('error');
    expect(describeSandbox(first)).toContain(
      '  logs        LOG_LEVEL=error: no access lines; LOG_LEVEL=log writes one for every request',
    );
  }, 90_000);

  it('says which access lines each LOG_LEVEL writes', () => {
    expect(accessLinesOf('warn')).toBe(
      'LOG_LEVEL=warn: access lines for 5xx answers only; LOG_LEVEL=log writes one for every request',
    );
    expect(accessLinesOf('log')).toBe('LOG_LEVEL=log: an access line for every request');
    expect(accessLinesOf('debug')).toBe('LOG_LEVEL=debug: an access line for every request');
  });

  it('refuses, in one line, a state file a live stack owns, and leaves it as it was', async () => {
    other = spawn('sleep', ['60'], { stdio: 'ignore' });
    const file = path.join(dir, 'taken.json');
    const owned = {
      apiUrl: 'http://127.0.0.1:3000',
      rpcUrl: 'http://127.0.0.1:8545',
      chainId: 84532,
      usdc: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      buyerAddress: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      buyerPrivateKey: `0x${'1'.repeat(64)}`,
      venues: 'recorded',
      pid: other.pid,
    };
    writeFileSync(file, JSON.stringify(owned));
    const failure = await startSandbox({ stateFile: file, env: { PORT: '0' } }).then(
      (sandbox) => {
        stacks.push(sandbox);
        return new Error('started');
      },
      (error: unknown) => error as Error,
    );
    expect(failure).toBeInstanceOf(StartupError);
    expect(failure.message).not.toContain('\n');
    expect(failure.message).toMatch(
      new RegExp(
        `^Another local stack \\(pid ${String(other.pid)}, http://127.0.0.1:3000\\) owns `,
      ),
    );
    expect(failure.message).toContain('SANDBOX_STATE_FILE');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(owned);
  });

  it('takes over a state file whose stack is gone', async () => {
    const gone = spawn('true', [], { stdio: 'ignore' });
    await new Promise((resolve) => gone.once('exit', resolve));
    const file = path.join(dir, 'stale.json');
    writeFileSync(
      file,
      JSON.stringify({ ...readSandboxState(stacks[0]!.stateFile), pid: gone.pid }),
    );
    const stack = await startOfflineSandbox(file);
    stacks.push(stack);
    expect(readSandboxState(file)?.pid).toBe(process.pid);
  }, 90_000);
});
