import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from './support/project-root.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';

const run = promisify(execFile);
const README_HOST = 'localhost:3000';

interface Example {
  readonly command: string;
  readonly shown: readonly string[];
}

/** Every `$ curl …` line in the README's bash blocks, with the lines it shows as its output. */
function curlExamples(readme: string): Example[] {
  const examples: Example[] = [];
  for (const block of readme.matchAll(/```bash\n([\s\S]*?)```/g)) {
    let current: { command: string; shown: string[] } | undefined;
    for (const line of (block[1] ?? '').split('\n')) {
      if (line.startsWith('$ ')) {
        current = { command: line.slice(2), shown: [] };
        if (current.command.startsWith('curl ')) examples.push(current);
      } else if (current !== undefined && line.trim() !== '') {
        current.shown.push(line.replace(/\s{2,}#.*$/, ''));
      }
    }
  }
  return examples;
}

/** A shown line as a pattern: `…` stands for whatever the README leaves out. */
function linePattern(shown: string): RegExp {
  const parts = shown.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*')}$`);
}

const readme = readFileSync(path.join(projectRoot(), 'README.md'), 'utf8');
const examples = curlExamples(readme);

describe('the README curl examples, run against the local stack', () => {
  let stack: PaidApp;
  let host: string;

  beforeAll(async () => {
    stack = await startPaidApp();
    host = `localhost:${new URL(stack.service.url).port}`;
  });

  afterAll(async () => {
    await stack.close();
  });

  it('finds the examples', () => {
    expect(examples.length).toBeGreaterThanOrEqual(4);
  });

  it.each(examples.map((example) => [example.command, example] as const))(
    '%s prints what the README shows',
    async (_command, example) => {
      const { stdout } = await run('bash', [
        '-o',
        'pipefail',
        '-c',
        example.command.replaceAll(README_HOST, host),
      ]);
      const lines = stdout.replaceAll('\r', '').split('\n');
      let next = 0;
      for (const shown of example.shown) {
        const pattern = linePattern(shown.replaceAll(README_HOST, host));
        const found = lines.findIndex((line, index) => index >= next && pattern.test(line));
        if (found === -1)
          throw new Error(`README shows\n  ${shown}\nbut the output was\n${stdout}`);
        next = found + 1;
      }
    },
  );
});
