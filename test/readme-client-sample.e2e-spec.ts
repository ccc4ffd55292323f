/**
 * The README's `npm run client -- ticker btc` sample shows every line the client prints around
 * the answer's body, in order: the request, what was paid, the settlement and the attestation
 * check. `0x…` in the sample stands for any hex value; the body's lines are the prices.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { EXIT_OK, runClient } from '../scripts/client.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { USDC } from './support/paying-clients.js';
import { projectRoot } from './support/project-root.js';

const SAMPLE_COMMAND = '`npm run client -- ticker btc`';
const SAMPLE_URL = 'http://127.0.0.1:3000';

/** The ```text block after the sentence naming the command. */
function readmeSample(): string[] {
  const readme = readFileSync(path.join(projectRoot(), 'README.md'), 'utf8');
  const after = readme.slice(readme.indexOf(SAMPLE_COMMAND));
  const block = /```text\n([\s\S]*?)```/.exec(after)?.[1];
  if (block === undefined) throw new Error(`README: no text block after ${SAMPLE_COMMAND}`);
  return block.trimEnd().split('\n');
}

/** The lines outside the pretty-printed JSON body. */
const outsideBody = (lines: readonly string[]): string[] =>
  lines.filter((line) => !/^[{}\s]/.test(line));

const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe("the README's npm run client sample", () => {
  let stack: PaidApp;
  const buyerKey = generatePrivateKey();

  beforeAll(async () => {
    stack = await startPaidApp({ markets: { venues: ['coinbase', 'kraken', 'bitstamp'] } });
    await stack.chain.mintUsdc(privateKeyToAccount(buyerKey).address, USDC);
  });

  afterAll(async () => {
    await stack.close();
  });

  it('shows every line the client prints around the body, in order', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runClient(['ticker', 'btc'], {
      apiUrl: stack.service.url,
      privateKey: buyerKey,
      stateFile: '/nonexistent',
      out: (text) => out.push(...text.split('\n')),
      err: (text) => err.push(text),
    });
    expect({ code, err }).toEqual({ code: EXIT_OK, err: [] });

    const expected = outsideBody(readmeSample()).map(
      (line) =>
        new RegExp(
          `^${escaped(line)
            .replace(escaped(SAMPLE_URL), escaped(stack.service.url))
            .replaceAll('0x…', '0x[0-9a-fA-F]+')}$`,
        ),
    );
    const printed = outsideBody(out);
    expect(printed).toHaveLength(expected.length);
    printed.forEach((line, index) => {
      expect(line).toMatch(expected[index]!);
    });
  });
});
