import { readFileSync } from 'node:fs';

const FIXTURES = new URL('../fixtures/markets/', import.meta.url);

/** A recorded venue response from test/fixtures/markets, parsed afresh on every call. */
export function loadFixture(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as unknown;
}

/** A recorded response as a mutable JSON tree of a shape the caller names, for tests that edit it. */
export function fixtureCopy<T>(name: string): T {
  return loadFixture(name) as T;
}
