import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * How the payments room is laid out, checked on the sources: the scheme seam speaks money, each
 * scheme keeps to its folder (the paywall, the ledger and the facilitators name none), and
 * `chain/` serves payments without knowing them.
 */

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MAX_LINES = 350;

/** Every source file (no spec) under `folder`, relative to src/. */
function sources(folder: string): string[] {
  return readdirSync(path.join(SRC, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !/\.(redis-)?spec\.ts$/.test(file))
    .map((file) => path.join(folder, file));
}

/** The src/-relative paths a file imports or loads (relative ones only). */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(SRC, file), 'utf8');
  return [...text.matchAll(/(?:from |import\()'(\.{1,2}\/[^']+)'/g)].map(([, target]) =>
    path.join(path.dirname(file), target ?? ''),
  );
}

/** `file` → what it imports under `forbidden`, for each offending file. */
function offending(files: readonly string[], forbidden: RegExp): Record<string, string[]> {
  return Object.fromEntries(
    files
      .map((file) => [file, importsOf(file).filter((target) => forbidden.test(target))] as const)
      .filter(([, targets]) => targets.length > 0),
  );
}

describe('the payments room', () => {
  it('keeps every source file under 350 lines', () => {
    const long = sources('payments')
      .map((file) => [file, readFileSync(path.join(SRC, file), 'utf8').split('\n').length])
      .filter(([, lines]) => (lines as number) > MAX_LINES);
    expect(long).toEqual([]);
  });

  it('has chain/ import nothing of payments/', () => {
    expect(offending(sources('chain'), /^payments\//)).toEqual({});
  });

  it.each(['paywall', 'ledger', 'facilitator'])(
    'has payments/%s/ name no scheme: nothing imported from schemes/',
    (folder) => {
      // each offending file with what it imports under schemes/, so the failure names both
      expect(offending(sources(`payments/${folder}`), /^payments\/schemes\//)).toEqual({});
    },
  );

  it('has the scheme seam speak money: no Fastify request or reply in a scheme folder', () => {
    const fastify = sources('payments/schemes').filter((file) =>
      /from 'fastify'/.test(readFileSync(path.join(SRC, file), 'utf8')),
    );
    expect(fastify).toEqual([]);
  });

  it('has each scheme keep to its folder: no scheme imports another', () => {
    const crossing = sources('payments/schemes').flatMap((file) => {
      const own = file.split(path.sep).slice(0, 3).join('/');
      return importsOf(file)
        .filter((target) => target.startsWith('payments/schemes/') && !target.startsWith(own))
        .map((target) => `${file} → ${target}`);
    });
    expect(crossing).toEqual([]);
  });
});
