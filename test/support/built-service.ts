import { execFile, spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { SERVICE_SCRIPT } from '../../scripts/start.js';
import { projectRoot } from './project-root.js';

const run = promisify(execFile);
export const BUILD_TIMEOUT_MS = 120_000;

/** What `npm start` does first: builds dist/ unless the last build is newer than every source. */
export async function buildIfStale(): Promise<void> {
  await run('node', ['scripts/build-if-stale.mjs'], {
    cwd: projectRoot(),
    timeout: BUILD_TIMEOUT_MS,
  });
}

/** Only what a shell needs: nothing of the test's own environment (X402_*, PORT) leaks in. */
export function bareEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? tmpdir(), ...extra };
}

/** The URL a started service logs once it listens; rejects with its output if it exits first. */
export function servingUrl(service: ChildProcess): Promise<string> {
  let output = '';
  return new Promise<string>((resolve, reject) => {
    const collect = (chunk: Buffer): void => {
      output += chunk.toString();
      const found = /Serving on (http:\/\/\S+?) /.exec(output)?.[1];
      if (found !== undefined) resolve(found.replace('[::1]', '127.0.0.1'));
    };
    service.stdout?.on('data', collect);
    service.stderr?.on('data', collect);
    service.once('exit', (code) => {
      reject(new Error(`the service exited (${String(code)}):\n${output}`));
    });
  });
}

/**
 * The built service (dist/src/main.js) as its own process on a loopback port, from the project
 * directory with `env` alone: a real process a test can SIGTERM or SIGKILL.
 */
export class ServiceProcess {
  private constructor(
    private readonly child: ChildProcessByStdio<null, Readable, Readable>,
    readonly url: string,
    private readonly output: { text: string },
  ) {}

  /** `cwd`: its working directory (relative data directories resolve there); tmpdir() by default. */
  static async start(
    env: Record<string, string>,
    { cwd = tmpdir() }: { cwd?: string } = {},
  ): Promise<ServiceProcess> {
    const child = spawn('node', [path.join(projectRoot(), SERVICE_SCRIPT)], {
      cwd,
      env: bareEnv({ HOST: '127.0.0.1', PORT: '0', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = { text: '' };
    const collect = (chunk: Buffer): void => {
      output.text += chunk.toString();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    try {
      return new ServiceProcess(child, await servingUrl(child), output);
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
  }

  /** Everything it wrote to stdout and stderr so far. */
  get logs(): string {
    return this.output.text;
  }

  get(route: string, init?: RequestInit): Promise<Response> {
    return fetch(`${this.url}${route}`, init);
  }

  /** Until /health/ready answers 200 (prices, facilitator, chain). */
  async ready(timeoutMs = 30_000): Promise<void> {
    for (const until = Date.now() + timeoutMs; ;) {
      if ((await this.get('/health/ready')).status === 200) return;
      if (Date.now() > until) throw new Error(`never ready:\n${this.output.text}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Sends `signal` and waits for the process to exit (and its output to be read). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) {
      return this.child.exitCode;
    }
    const closed = new Promise<number | null>((resolve) =>
      this.child.once('close', (code) => {
        resolve(code);
      }),
    );
    this.child.kill(signal);
    return closed;
  }
}
