import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SERVICE_SCRIPT } from '../scripts/start.js';
import { shippedMallocEnv, shippedNodeFlags, shippedScript } from '../bench/shipped-node-flags.js';
import { projectRoot } from './support/project-root.js';

const scripts = (
  JSON.parse(readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;

describe('the node flags the service ships with', () => {
  it("are the Dockerfile's, and npm start passes the same ones", () => {
    const flags = shippedNodeFlags();
    expect(flags).toEqual([
      '--max-semi-space-size=4',
      '--heap-growing-percent=25',
      '--no-allocation-site-pretenuring',
    ]);
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
    expect(
      shippedNodeFlags('FROM a\nCMD ["node", "--a", "x.js"]\nFROM b\nCMD ["node", "--b", "x.js"]'),
    ).toEqual(['--b']);
  });

  it("run the bundle npm run build leaves, which is what npm start's service runs too", () => {
    expect(shippedScript()).toBe('dist/bundle/main.js');
    expect(SERVICE_SCRIPT).toBe(shippedScript());
    expect(shippedScript('CMD ["node", "--a=1", "--b", "x/main.js", "--arg"]')).toBe('x/main.js');
    expect(() => shippedScript('CMD ["node", "--a=1"]')).toThrow(/runs no script/);
  });

  it('cannot be read from a Dockerfile that does not run node in exec form', () => {
    expect(() => shippedNodeFlags('CMD node dist/src/main.js')).toThrow(/no exec-form CMD/);
    expect(() => shippedNodeFlags('CMD ["npm", "start"]')).toThrow(/does not run node/);
  });
});

describe('the allocator settings the service ships with', () => {
  it("are glibc's fixed trim and mmap thresholds, set in the Dockerfile's runtime stage", () => {
    expect(shippedMallocEnv()).toEqual({
      MALLOC_TRIM_THRESHOLD_: '131072',
      MALLOC_MMAP_THRESHOLD_: '131072',
    });
  });

  it('are read from the last stage only, and only the MALLOC_ variables', () => {
    const dockerfile = [
      'FROM a AS build',
      'ENV MALLOC_ARENA_MAX=4',
      'FROM b',
      'ENV NODE_ENV=production',
      'ENV MALLOC_TRIM_THRESHOLD_=1 MALLOC_MMAP_THRESHOLD_=2',
      'CMD ["node", "x.js"]',
    ].join('\n');
    expect(shippedMallocEnv(dockerfile)).toEqual({
      MALLOC_TRIM_THRESHOLD_: '1',
      MALLOC_MMAP_THRESHOLD_: '2',
    });
    expect(shippedMallocEnv('FROM b\nCMD ["node", "x.js"]')).toEqual({});
  });

  it('are read whatever the case of the instructions and their indentation', () => {
    expect(
      shippedMallocEnv('from a\nENV MALLOC_ARENA_MAX=4\n  From b\n  env MALLOC_ARENA_MAX=2\n'),
    ).toEqual({ MALLOC_ARENA_MAX: '2' });
  });

  it('cannot be read from an ENV Docker would read differently: legacy form, quotes, variables', () => {
    for (const env of ['MALLOC_ARENA_MAX 2', 'MALLOC_ARENA_MAX="2"', 'MALLOC_ARENA_MAX=$N']) {
      expect(() => shippedMallocEnv(`FROM b\nENV ${env}\n`)).toThrow(/plain KEY=value/);
    }
  });
});
