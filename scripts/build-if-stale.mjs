#!/usr/bin/env node
// `npm start`'s first step: `npm run build` only when a compiled source or a build setting is
// newer than the last successful build (dist/.build-stamp), so a start with an up-to-date build
// (or one refused for its configuration) does not wait for the compiler.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = path.join(ROOT, 'dist', '.build-stamp');
/** Held while one process builds: another waits for it rather than emptying dist/ under it. */
const LOCK = path.join(ROOT, '.build-lock');
/** A lock older than this was left by a build that died. */
const STALE_LOCK_MS = 10 * 60_000;
/** What `npm run build` compiles (tsconfig.build.json) and what decides how. */
const SOURCE_DIRS = ['src', 'scripts', 'bench', 'test/support'];
const SETTINGS = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'nest-cli.json',
];

/** Newest modification time of the files the build reads; tests are not built. */
function newestSource() {
  let newest = 0;
  const visit = (file) => {
    const stat = statSync(file);
    if (stat.isDirectory()) {
      for (const entry of readdirSync(file)) visit(path.join(file, entry));
    } else if (!/\.(e2e-)?spec\.ts$/.test(file)) {
      newest = Math.max(newest, stat.mtimeMs);
    }
  };
  for (const name of [...SOURCE_DIRS, ...SETTINGS]) {
    const file = path.join(ROOT, name);
    if (existsSync(file)) visit(file);
  }
  return newest;
}

function lock() {
  for (;;) {
    try {
      mkdirSync(LOCK);
      return;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      if (Date.now() - statSync(LOCK).mtimeMs > STALE_LOCK_MS)
        rmSync(LOCK, { force: true, recursive: true });
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
    }
  }
}

lock();
try {
  if (!existsSync(STAMP) || statSync(STAMP).mtimeMs < newestSource()) {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  }
} finally {
  rmSync(LOCK, { force: true, recursive: true });
}
