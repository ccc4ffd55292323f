import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../test/support/project-root.js';

/**
 * The node flags the service runs with: those of the `CMD` of the Dockerfile's last stage,
 * between `node` and the script. `npm start` passes the same ones
 * (test/shipped-node-flags.e2e-spec.ts), and the bench starts the product with them, so what it
 * measures is what ships.
 */
export function shippedNodeFlags(dockerfile: string = readDockerfile()): string[] {
  const argv = shippedCommand(dockerfile);
  const script = argv.findIndex((arg, index) => index > 0 && !arg.startsWith('-'));
  return argv.slice(1, script === -1 ? undefined : script);
}

/**
 * The script the service runs: the first argument of that `CMD` after node's flags
 * (`dist/bundle/main.js`, the bundle `npm run build` leaves). The bench loads the product from
 * its directory, so it measures the code that ships.
 */
export function shippedScript(dockerfile: string = readDockerfile()): string {
  const argv = shippedCommand(dockerfile);
  const script = argv.find((arg, index) => index > 0 && !arg.startsWith('-'));
  if (script === undefined)
    throw new Error(`the Dockerfile's CMD runs no script: ${argv.join(' ')}`);
  return script;
}

/** The exec-form `CMD` of the Dockerfile's last stage, which must run node. */
function shippedCommand(dockerfile: string): string[] {
  const cmd = /^\s*CMD\s+(\[.*\])\s*$/im.exec(runtimeStage(dockerfile))?.[1];
  if (cmd === undefined) throw new Error('the Dockerfile has no exec-form CMD');
  const argv = JSON.parse(cmd) as unknown;
  if (!isNodeCommand(argv)) throw new Error(`the Dockerfile's CMD does not run node: ${cmd}`);
  return argv;
}

/**
 * The C library's allocator settings the service runs with: the `MALLOC_*` variables the
 * Dockerfile's runtime stage (its last `FROM`) sets with `ENV`. glibc reads them once, as the
 * process starts, so they cannot be set from inside node; the bench passes them to the product.
 */
export function shippedMallocEnv(dockerfile: string = readDockerfile()): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [, pairs = ''] of runtimeStage(dockerfile).matchAll(/^\s*ENV\s+(.*)$/gim)) {
    for (const pair of pairs.trim().split(/\s+/)) {
      // plain KEY=value only: quotes, variables and the legacy `ENV KEY value` form are refused
      // rather than read differently from Docker
      const match = /^([A-Za-z_][A-Za-z0-9_]*)=([^\s"'$\\]*)$/.exec(pair);
      if (match === null) throw new Error(`the Dockerfile's ENV is not plain KEY=value: ${pairs}`);
      const [, name = '', value = ''] = match;
      if (name.startsWith('MALLOC_')) env[name] = value;
    }
  }
  return env;
}

/** The Dockerfile's last stage, the image that runs: from its last `FROM` to the end. */
function runtimeStage(dockerfile: string): string {
  const froms = [...dockerfile.matchAll(/^\s*FROM\s/gim)];
  const last = froms[froms.length - 1];
  return last === undefined ? dockerfile : dockerfile.slice(last.index);
}

function readDockerfile(): string {
  return readFileSync(path.join(projectRoot(import.meta.url), 'Dockerfile'), 'utf8');
}

function isNodeCommand(argv: unknown): argv is string[] {
  return Array.isArray(argv) && argv[0] === 'node' && argv.every((arg) => typeof arg === 'string');
}
