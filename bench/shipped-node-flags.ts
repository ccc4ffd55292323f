import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../test/support/project-root.js';

/**
 * The node flags the service runs with: those of the Dockerfile's `CMD`, between `node` and the
 * script. `npm start` passes the same ones (test/shipped-node-flags.e2e-spec.ts), and the bench
 * starts the product with them, so what it measures is what ships.
 */
export function shippedNodeFlags(dockerfile: string = readDockerfile()): string[] {
  const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(dockerfile)?.[1];
  if (cmd === undefined) throw new Error('the Dockerfile has no exec-form CMD');
  const argv = JSON.parse(cmd) as unknown;
  if (!isNodeCommand(argv)) throw new Error(`the Dockerfile's CMD does not run node: ${cmd}`);
  const script = argv.findIndex((arg, index) => index > 0 && !arg.startsWith('-'));
  return argv.slice(1, script === -1 ? undefined : script);
}

/**
 * The C library's allocator settings the service runs with: the `MALLOC_*` variables the
 * Dockerfile's runtime stage (its last `FROM`) sets with `ENV`. glibc reads them once, as the
 * process starts, so they cannot be set from inside node; the bench passes them to the product.
 */
export function shippedMallocEnv(dockerfile: string = readDockerfile()): Record<string, string> {
  const stages = dockerfile.split(/^FROM\s/m);
  const runtime = stages[stages.length - 1] ?? '';
  const env: Record<string, string> = {};
  for (const [, pairs = ''] of runtime.matchAll(/^ENV\s+(.*)$/gm)) {
    for (const pair of pairs.trim().split(/\s+/)) {
      const match = /^([A-Za-z_][A-Za-z0-9_]*)=(\S*)$/.exec(pair);
      if (match === null)
        throw new Error(`the Dockerfile's ENV is not in KEY=value form: ${pairs}`);
      const [, name = '', value = ''] = match;
      if (name.startsWith('MALLOC_')) env[name] = value;
    }
  }
  return env;
}

function readDockerfile(): string {
  return readFileSync(path.join(projectRoot(import.meta.url), 'Dockerfile'), 'utf8');
}

function isNodeCommand(argv: unknown): argv is string[] {
  return Array.isArray(argv) && argv[0] === 'node' && argv.every((arg) => typeof arg === 'string');
}
