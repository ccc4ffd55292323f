import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from './project-root.js';

const FIXTURES = path.join(projectRoot(), 'test', 'fixtures', 'markets');
const recorded = new Map<string, string>();

/** A recorded venue response from test/fixtures/markets, parsed afresh on every call. */
export function loadFixture(name: string): unknown {
  let text = recorded.get(name);
  if (text === undefined) {
    text = readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8');
    recorded.set(name, text);
  }
  return JSON.parse(text) as unknown;
}

/** A recorded response as a mutable JSON tree of a shape the caller names, for tests that edit it. */
export function fixtureCopy<T>(name: string): T {
  return loadFixture(name) as T;
}
