import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from './support/project-root.js';

const ROOT = projectRoot();
const run = promisify(execFile);

const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(file);
    // what the build leaves out (*.spec.ts, *.redis-spec.ts) is no part of the service
    return entry.name.endsWith('.ts') && !/[.-]spec\.ts$/.test(entry.name) ? [file] : [];
  });
}

/** `@scope/name` or `name` of a bare import specifier. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** Any attempt to reach the network or run a command, made visible on stderr and stopped. */
const BLOCK_NETWORK = `
import http from 'node:http'; import https from 'node:https'; import net from 'node:net';
import cp from 'node:child_process';
const stop = (what) => { process.stderr.write('ATTEMPT ' + what + '\\n'); throw new Error('blocked'); };
http.request = http.get = https.request = https.get = () => stop('http');
net.connect = net.createConnection = () => stop('connect');
cp.exec = cp.spawn = cp.execFile = () => stop('spawn');
`;

describe('dependencies', () => {
  it('the service imports only runtime dependencies; client-only packages are dev ones', () => {
    const imported = new Set<string>();
    for (const file of sourceFiles(path.join(ROOT, 'src'))) {
      const text = readFileSync(file, 'utf8');
      for (const [, specifier] of text.matchAll(/^import(?! type)[^'"]*['"]([^'"]+)['"]/gm)) {
        if (!specifier!.startsWith('.') && !specifier!.startsWith('node:'))
          imported.add(packageOf(specifier!));
      }
    }
    const missing = [...imported].filter((name) => manifest.dependencies[name] === undefined);
    expect(missing).toEqual([]);
    for (const client of ['@x402/fetch', 'x402-fetch']) {
      expect(manifest.dependencies[client]).toBeUndefined();
      expect(manifest.devDependencies[client]).toBeDefined();
    }
  });

  it("swagger-ui's install-time telemetry (@scarf/scarf) neither reports nor looks around", async () => {
    const report = path.join(ROOT, 'node_modules/@scarf/scarf/report.js');
    if (!existsSync(report)) return; // not installed at all: nothing can report
    const { stdout, stderr } = await run(
      'node',
      ['--import', `data:text/javascript,${encodeURIComponent(BLOCK_NETWORK)}`, report],
      { cwd: ROOT, env: { PATH: process.env['PATH'] ?? '', INIT_CWD: ROOT }, timeout: 20_000 },
    );
    expect(`${stdout}${stderr}`).not.toContain('ATTEMPT');
  });
});
