#!/usr/bin/env node
// Adds lock entries for other platforms' native bindings that this machine's registry mirror
// lacks (npm leaves them out, and `npm ci` then fails with "Missing ... from lock file").
// Entries are marked optional with os/cpu/libc from the binding's name, so npm skips them on
// platforms they do not fit and fetches them normally where they do. Run after `npm install`.
import console from 'node:console';
import { readFileSync, writeFileSync } from 'node:fs';
import { URL } from 'node:url';

const LOCK = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(LOCK, 'utf8'));
const packages = lock.packages;
const OS = ['darwin', 'linux', 'win32', 'freebsd', 'android', 'openharmony', 'wasm32'];
const CPU = {
  x64: 'x64',
  arm64: 'arm64',
  arm: 'arm',
  ia32: 'ia32',
  loong64: 'loong64',
  ppc64: 'ppc64',
  riscv64: 'riscv64',
  s390x: 's390x',
  wasm32: 'wasm32',
};

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((part) => OS.includes(part));
  const cpu = parts.map((part) => CPU[part]).find(Boolean);
  const libc = parts.includes('musl')
    ? 'musl'
    : parts.includes('gnu') || parts.some((p) => p.startsWith('gnueabi'))
      ? 'glibc'
      : undefined;
  return { os, cpu, libc };
}

let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (packages[key] !== undefined || !/^\d+\.\d+\.\d+/.test(version)) continue;
    const { os, cpu, libc } = platformOf(name);
    if (os === undefined && cpu === undefined) continue;
    const file = `${name.split('/').pop()}-${version}.tgz`;
    packages[key] = {
      version,
      resolved: `https://registry.npmjs.org/${name}/-/${file}`,
      ...(cpu === undefined || cpu === 'wasm32' ? {} : { cpu: [cpu] }),
      ...(entry.dev ? { dev: true } : {}),
      ...(libc === undefined ? {} : { libc: [libc] }),
      optional: true,
      ...(os === undefined || os === 'wasm32' ? {} : { os: [os] }),
    };
    added += 1;
    console.log(`added ${key}@${version} (for ${path})`);
  }
}
writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`${added} entries added`);
