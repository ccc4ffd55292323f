import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { projectRoot } from './support/project-root.js';

interface LockedPackage {
  readonly engines?: { readonly node?: string };
  readonly optional?: boolean;
  readonly os?: readonly string[];
}

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(path.join(projectRoot(), file), 'utf8')) as T;
}

const manifest = readJson<{ engines: { node: string } }>('package.json');
const lock = readJson<{ packages: Record<string, LockedPackage> }>('package-lock.json');

describe('the Node.js requirement', () => {
  it('covers no version that a locked dependency refuses (npm ci prints no engine warning)', () => {
    const stated = manifest.engines.node;
    expect(semver.validRange(stated)).not.toBeNull();
    const refusing = Object.entries(lock.packages)
      .filter(([name, locked]) => name !== '' && locked.engines?.node !== undefined)
      .filter(([, locked]) => !semver.subset(stated, locked.engines!.node!))
      .map(([name, locked]) => `${name} wants ${locked.engines!.node!}`);
    expect(refusing).toEqual([]);
  });

  it('is the one the README states', () => {
    const readme = readFileSync(path.join(projectRoot(), 'README.md'), 'utf8');
    expect(readme).toContain(`Node.js \`${manifest.engines.node}\``);
  });
});
