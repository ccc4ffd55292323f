import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../test/support/project-root.js';

/**
 * The node flags the service runs with: those of the Dockerfile's `CMD`, between `node` and the
 * script. `npm start` passes the same ones (test/shipped-node-flags.e2e-spec.ts), and the bench
 * starts the product with them, so what it measures is what ships.
 */
export function shippedNodeFlags(
  dockerfile: string = readFileSync(path.join(projectRoot(import.meta.url), 'Dockerfile'), 'utf8'),
): string[] {
  const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(dockerfile);
  if (cmd === null) throw new Error('the Dockerfile has no exec-form CMD');
  const argv = JSON.parse(cmd[1]!) as unknown;
  if (!Array.isArray(argv) || argv[0] !== 'node' || !argv.every((arg) => typeof arg === 'string')) {
    throw new Error(`the Dockerfile's CMD does not run node: ${cmd[1]!}`);
  }
  const script = argv.findIndex((arg: string, index) => index > 0 && !arg.startsWith('-'));
  return argv.slice(1, script === -1 ? undefined : script) as string[];
}
