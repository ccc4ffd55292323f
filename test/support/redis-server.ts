/**
 * A real redis-server (from PATH) on a free loopback port, for the suites and benchmarks that
 * run against the shared (Redis) stores; suites wrap themselves in describeWithRedis
 * (redis-suite.ts).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

const STARTUP_TIMEOUT_MS = 10_000;

export function redisServerAvailable(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  /** Stops the server for good and removes its data directory. */
  stop(): Promise<void>;
  /** Stops it (SIGTERM: with persistence on, it writes its data first), then starts it again. */
  restart(): Promise<void>;
  /** Kills it (SIGKILL) for good, as a crash would. */
  kill(): Promise<void>;
  /** Stops it (SIGTERM) keeping its port and data directory, for start() to bring it back. */
  stopTemporarily(): Promise<void>;
  start(): Promise<void>;
}

export interface RedisServerOptions {
  /** Keep data in an append-only file (fsync always) so a restart of Redis keeps it. */
  readonly persistent?: boolean;
}

export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'redis-test-'));
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    ...(options.persistent === true
      ? ['--appendonly', 'yes', '--appendfsync', 'always']
      : ['--appendonly', 'no']),
  ];
  let child: ChildProcess | undefined = await launch(args, port);
  const stopWith = async (signal: NodeJS.Signals): Promise<void> => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill(signal);
    await exited;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: async () => {
      await stopWith('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
    kill: async () => {
      await stopWith('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
    restart: async () => {
      await stopWith('SIGTERM');
      child = await launch(args, port);
    },
    stopTemporarily: () => stopWith('SIGTERM'),
    start: async () => {
      if (child === undefined) child = await launch(args, port);
    },
  };
}

async function launch(args: string[], port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output += chunk.toString();
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited:\n${output}`);
    if (await accepts(port)) return child;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  child.kill('SIGKILL');
  throw new Error(
    `redis-server did not listen on ${port} within ${STARTUP_TIMEOUT_MS} ms:\n${output}`,
  );
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      resolve(false);
    });
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => {
        resolve(port);
      });
    });
  });
}
