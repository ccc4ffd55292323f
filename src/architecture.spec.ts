import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { projectRoot } from '../test/support/project-root.js';

/*
 * The rooms' rules (docs/architecture.md, "Rooms"): a room is a top-level folder under src/;
 * these rules say which rooms one may not import at all, which room is entered through one
 * face only, and how long a source file may be. Test files (`*.spec.ts`, `*.redis-spec.ts`)
 * are not held to them: a test may reach into any room to build its fixtures.
 */

/** Rooms a room may not import anything of. */
const FORBIDDEN_ROOMS: Readonly<Record<string, readonly string[]>> = {
  aggregation: ['payments', 'tickers'],
  markets: ['payments', 'tickers', 'assets', 'aggregation'],
  chain: ['payments'],
  attestation: ['tickers'],
};

/** Rooms entered from outside through one file only. */
const FACES: Readonly<Record<string, string>> = {
  payments: 'payments/index.ts',
};

const MAX_LINES = 350;

const SRC = path.join(projectRoot(import.meta.url), 'src');

/** One import of a project file: `from` and `to` relative to src/, with forward slashes. */
interface Import {
  readonly from: string;
  readonly to: string;
  readonly line: number;
  readonly specifier: string;
}

function isTest(file: string): boolean {
  return /[.-]spec\.ts$/.test(file);
}

/** Every non-test TypeScript file under `dir`, relative to src/. */
function sourceFiles(dir: string = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    const typescript = entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts');
    return typescript && !isTest(entry.name) ? [toSrcPath(full)] : [];
  });
}

function toSrcPath(full: string): string {
  return path.relative(SRC, full).split(path.sep).join('/');
}

/**
 * The project files `text` (the file `from`, relative to src/) imports: import and export-from
 * statements, `import type`, side-effect imports and `import()`, as the compiler reads them
 * (never from strings or comments). Package imports are not rooms and are left out; a `.js`
 * specifier names the `.ts` file it is compiled from.
 */
function importsIn(from: string, text: string): Import[] {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles
    .filter(({ fileName }) => fileName.startsWith('./') || fileName.startsWith('../'))
    .map(({ fileName, pos }) => {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), fileName));
      return {
        from,
        to: target.replace(/\.js$/, '.ts'),
        line: text.slice(0, pos).split('\n').length,
        specifier: fileName,
      };
    });
}

/** The room of a path relative to src/: its top-level folder; '' for files at src/ itself. */
function roomOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? '' : file.slice(0, slash);
}

/** `from:line imports 'specifier' (to)`: where the offending import is and what it reaches. */
function described({ from, to, line, specifier }: Import): string {
  return `src/${from}:${line} imports '${specifier}' (src/${to})`;
}

/** Imports that break FORBIDDEN_ROOMS, each with the rule it breaks. */
function forbiddenImports(
  imports: readonly Import[],
  forbidden: Readonly<Record<string, readonly string[]>> = FORBIDDEN_ROOMS,
): string[] {
  return imports.flatMap((entry) => {
    const from = roomOf(entry.from);
    const to = roomOf(entry.to);
    if (!(forbidden[from] ?? []).includes(to)) return [];
    return [`${described(entry)}: ${from}/ imports nothing of ${to}/`];
  });
}

/** Imports from outside a room with a face that reach past that face. */
function importsPastFaces(
  imports: readonly Import[],
  faces: Readonly<Record<string, string>> = FACES,
): string[] {
  return imports.flatMap((entry) => {
    const to = roomOf(entry.to);
    const face = faces[to];
    if (face === undefined || roomOf(entry.from) === to || entry.to === face) return [];
    return [`${described(entry)}: outside ${to}/, import only src/${face}`];
  });
}

/** Files longer than `max` lines, with their length. */
function longFiles(files: Readonly<Record<string, string>>, max = MAX_LINES): string[] {
  return Object.entries(files).flatMap(([file, text]) => {
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    return lines > max ? [`src/${file} has ${lines} lines (at most ${max})`] : [];
  });
}

describe('the rooms under src/', () => {
  const texts: Record<string, string> = Object.fromEntries(
    sourceFiles().map((file) => [file, readFileSync(path.join(SRC, file), 'utf8')]),
  );
  const imports = Object.entries(texts).flatMap(([file, text]) => importsIn(file, text));

  it('reads every source file and its imports, resolved to files that exist', () => {
    expect(texts['app.module.ts']).toBeDefined();
    expect(Object.keys(texts).filter(isTest)).toEqual([]);
    expect(imports).toContainEqual(
      expect.objectContaining({ from: 'app.module.ts', to: 'payments/index.ts' }),
    );
    const missing = imports.filter(({ to }) => !(to in texts)).map(described);
    expect(missing).toEqual([]);
  });

  const forbidden = Object.entries(FORBIDDEN_ROOMS).map(([room, rooms]) => ({
    room,
    rooms: rooms.map((name) => `${name}/`).join(', '),
  }));
  it.each(forbidden)('$room/ imports nothing of $rooms', ({ room }) => {
    const own = imports.filter(({ from }) => roomOf(from) === room);
    expect(forbiddenImports(own)).toEqual([]);
  });

  it.each(Object.entries(FACES))('nothing outside %s/ imports past %s', (room) => {
    const into = imports.filter(({ to }) => roomOf(to) === room);
    expect(importsPastFaces(into)).toEqual([]);
  });

  it(`has no source file over ${MAX_LINES} lines`, () => {
    expect(longFiles(texts)).toEqual([]);
  });
});

describe('the import rules themselves', () => {
  it('find every kind of import and resolve it relative to its file', () => {
    const text = [
      "import { A } from './a.js';",
      "import type { B } from '../payments/networks/b.js';",
      "export { C } from '../tickers/c.js';",
      "export * from './d.js';",
      "import './e.js';",
      "const f = await import('../chain/f.js');",
      "import { g } from '@nestjs/common';",
      'const text = "import(\'../tickers/not-an-import.js\')";',
      "// import { h } from '../tickers/h.js';",
    ].join('\n');
    expect(importsIn('aggregation/sub/x.ts', text).map(({ to, line }) => [to, line])).toEqual([
      ['aggregation/sub/a.ts', 1],
      ['aggregation/payments/networks/b.ts', 2],
      ['aggregation/tickers/c.ts', 3],
      ['aggregation/sub/d.ts', 4],
      ['aggregation/sub/e.ts', 5],
      ['aggregation/chain/f.ts', 6],
    ]);
    expect(importsIn('aggregation/x.ts', text).map(({ to }) => to)).toContain(
      'payments/networks/b.ts',
    );
  });

  it('name the file, line and import that break a rule', () => {
    const imports = importsIn(
      'markets/venue.ts',
      "import { X } from '../assets/x.js';\nimport type { Y } from '../payments/networks/y.js';\n",
    );
    expect(forbiddenImports(imports)).toEqual([
      "src/markets/venue.ts:1 imports '../assets/x.js' (src/assets/x.ts): markets/ imports nothing of assets/",
      "src/markets/venue.ts:2 imports '../payments/networks/y.js' (src/payments/networks/y.ts): markets/ imports nothing of payments/",
    ]);
    expect(importsPastFaces(imports)).toEqual([
      "src/markets/venue.ts:2 imports '../payments/networks/y.js' (src/payments/networks/y.ts): outside payments/, import only src/payments/index.ts",
    ]);
  });

  it('let a room import itself, its face, and rooms it may', () => {
    const imports = [
      ...importsIn('payments/paywall/p.ts', "import { Q } from '../networks/q.js';"),
      ...importsIn('health/h.ts', "import { P } from '../payments/index.js';"),
      ...importsIn('aggregation/a.ts', "import { M } from '../markets/m.js';"),
    ];
    expect(forbiddenImports(imports)).toEqual([]);
    expect(importsPastFaces(imports)).toEqual([]);
  });

  it('count a file by its lines, a last newline not making one more', () => {
    const text = (lines: number): string => 'x\n'.repeat(lines);
    expect(
      longFiles({ 'a.ts': text(350), 'b.ts': text(351), 'c.ts': 'x\n'.repeat(350) + 'y' }),
    ).toEqual(['src/b.ts has 351 lines (at most 350)', 'src/c.ts has 351 lines (at most 350)']);
  });
});
