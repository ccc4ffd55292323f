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
  const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(dockerfile)?.[1];
  if (cmd === undefined) throw new Error('the Dockerfile has no exec-form CMD');
  const argv = JSON.parse(cmd) as unknown;
  if (!isNodeCommand(argv)) throw new Error(`the Dockerfile's CMD does not run node: ${cmd}`);
  const script = argv.findIndex((arg, index) => index > 0 && !arg.startsWith('-'));
  return argv.slice(1, script === -1 ? undefined : script);
}

function isNodeCommand(argv: unknown): argv is string[] {
  return Array.isArray(argv) && argv[0] === 'node' && argv.every((arg) => typeof arg === 'string');
}
