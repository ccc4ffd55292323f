/**
 * Debian's nginx (/usr/sbin/nginx) running deploy/nginx.conf as the compose file's proxy does:
 * the file is included in an `http` block of a main configuration whose pid, logs, cache and
 * temporary files live in a temporary directory; the upstream's service names (api-1:3000) point
 * at loopback ports, as Docker's DNS would point them at the replicas; it listens on a free
 * loopback port instead of the container's 80.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projectRoot } from './project-root.js';
import { freePort } from './redis-server.js';

export const NGINX_BINARY = '/usr/sbin/nginx';
const STARTUP_TIMEOUT_MS = 10_000;

export function nginxAvailable(): boolean {
  return (
    existsSync(NGINX_BINARY) && spawnSync(NGINX_BINARY, ['-v'], { stdio: 'ignore' }).status === 0
  );
}

export interface NginxProxy {
  readonly url: string;
  /** The access log so far. */
  accessLog(): string;
  /** Stops nginx (SIGQUIT: graceful) and removes its directory. */
  stop(): Promise<void>;
}

/**
 * deploy/nginx.conf with `upstreams` (service name → loopback port) in place of the compose
 * service names, listening on `listenPort`, its cache under `dir`. Throws if a name the file
 * proxies to is missing from `upstreams`, or the file does not listen where compose publishes.
 */
export function rewriteNginxConf(
  upstreams: Readonly<Record<string, number>>,
  listenPort: number,
  dir: string,
): string {
  const original = readFileSync(path.join(projectRoot(), 'deploy', 'nginx.conf'), 'utf8');
  if (!/^\s*listen 80;$/m.test(original)) throw new Error('deploy/nginx.conf: no `listen 80;`');
  return original
    .replace(/^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${listenPort};`)
    .replace(/(proxy_cache_path\s+)\S+/, `$1${path.join(dir, 'cache')}`)
    .replace(/^(\s*server\s+)([A-Za-z0-9_.-]+):(\d+)/gm, (_match, lead: string, name: string) => {
      const port = upstreams[name];
      if (port === undefined) throw new Error(`deploy/nginx.conf proxies to ${name}: no port`);
      return `${lead}127.0.0.1:${port}`;
    });
}

/** `port`: where it listens (the port compose publishes); a free one by default. */
export async function startNginxProxy(
  upstreams: Readonly<Record<string, number>>,
  port?: number,
): Promise<NginxProxy> {
  const dir = mkdtempSync(path.join(tmpdir(), 'nginx-test-'));
  port ??= await freePort();
  const main = [
    'daemon off;',
    // the test runs as root: workers keep root's access to the temporary directory
    'user root;',
    'worker_processes 1;',
    `pid ${path.join(dir, 'nginx.pid')};`,
    `error_log ${path.join(dir, 'error.log')} warn;`,
    'events { worker_connections 256; }',
    'http {',
    `  access_log ${path.join(dir, 'access.log')};`,
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
      (kind) => `  ${kind}_temp_path ${path.join(dir, kind)};`,
    ),
    `  include ${path.join(dir, 'default.conf')};`,
    '}',
  ].join('\n');
  writeFileSync(path.join(dir, 'default.conf'), rewriteNginxConf(upstreams, port, dir));
  writeFileSync(path.join(dir, 'nginx.conf'), main);
  const child = spawn(
    NGINX_BINARY,
    ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const read = (file: string): string => {
    const full = path.join(dir, file);
    return existsSync(full) ? readFileSync(full, 'utf8') : '';
  };
  try {
    await listening(child, port, () => `${output}${read('error.log')}`);
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `http://127.0.0.1:${port}`,
    accessLog: () => read('access.log'),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGQUIT');
        const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(killer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function listening(child: ChildProcess, port: number, logs: () => string): Promise<void> {
  for (const until = Date.now() + STARTUP_TIMEOUT_MS; Date.now() < until;) {
    if (child.exitCode !== null) throw new Error(`nginx exited:\n${logs()}`);
    if (await accepts(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`nginx did not listen on ${port} within ${STARTUP_TIMEOUT_MS} ms:\n${logs()}`);
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
