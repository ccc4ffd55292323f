import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { shippedNodeFlags } from '../bench/shipped-node-flags.js';
import { projectRoot } from './support/project-root.js';

const scripts = (
  JSON.parse(readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;

describe('the node flags the service ships with', () => {
  it("are the Dockerfile's, and npm start passes the same ones", () => {
    const flags = shippedNodeFlags();
    expect(flags).toEqual(['--max-semi-space-size=4', '--heap-growing-percent=25']);
    expect(scripts['start']).toBe(`npm run build && node ${flags.join(' ')} dist/scripts/start.js`);
  });

  it('are accepted by this node (a V8 flag it does not know stops it at start)', () => {
    const out = execFileSync(
      process.execPath,
      [...shippedNodeFlags(), '-p', "require('v8').getHeapStatistics().total_heap_size > 0"],
      { encoding: 'utf8' },
    );
    expect(out.trim()).toBe('true');
  });

  it('are read from the exec-form CMD, between node and the script', () => {
    expect(shippedNodeFlags('FROM x\nCMD ["node", "--a=1", "--b", "dist/src/main.js"]\n')).toEqual([
      '--a=1',
      '--b',
    ]);
    expect(shippedNodeFlags('CMD ["node", "dist/src/main.js"]')).toEqual([]);
  });

  it('cannot be read from a Dockerfile that does not run node in exec form', () => {
    expect(() => shippedNodeFlags('CMD node dist/src/main.js')).toThrow(/no exec-form CMD/);
    expect(() => shippedNodeFlags('CMD ["npm", "start"]')).toThrow(/does not run node/);
  });
});
