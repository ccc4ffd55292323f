import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, parseCommand, runClient } from '../scripts/client.js';
import type { Sandbox } from '../scripts/sandbox.js';
import { parseSse } from '../scripts/sse-lines.js';
import { startOfflineSandbox } from './support/offline-sandbox.js';
import { PriceWalk } from './support/price-walk.js';

/** `npm run client -- stream ...` against the local stack with moving prices. */
describe('npm run client -- stream (scripts/stream-client.ts) on the local stack', () => {
  let sandbox: Sandbox;
  let dir: string;
  let stateFile: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'stream-client-'));
    stateFile = path.join(dir, '.sandbox.json');
    sandbox = await startOfflineSandbox(stateFile, new PriceWalk({ seed: 21, intervalMs: 100 }));
  }, 120_000);

  afterAll(async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function run(
    argv: string[],
    interrupt?: AbortSignal,
    onOut?: (line: string) => void,
  ): Promise<{ code: number; out: string[]; err: string[] }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runClient(argv, {
      env: {},
      stateFile,
      out: (text) => {
        out.push(text);
        onOut?.(text);
      },
      err: (text) => err.push(text),
      ...(interrupt === undefined ? {} : { interrupt }),
    });
    return { code, out, err };
  }

  const priceLines = (out: readonly string[]) =>
    out.filter((line) => /^BTC \d+(\.\d+)? {2}\(#\d+, charged \$[0-9.]+\)$/.test(line));

  it('streams until the budget is used up: budget / price updates, each charged and attested', async () => {
    const { code, out, err } = await run(['stream', 'BTC', '--budget', '0.0005', '--max-hz', '10']);
    expect(err).toEqual([]);
    expect(code).toBe(EXIT_OK);
    expect(out[0]).toMatch(
      /\/v1\/stream\/BTC\?maxHz=10 .*budget \$0\.0005 = 5 updates at \$0\.0001 each/,
    );
    expect(
      priceLines(out).map((line) => /#(\d+), charged \$([0-9.]+)/.exec(line)?.slice(1)),
    ).toEqual([
      ['1', '0.0001'],
      ['2', '0.0002'],
      ['3', '0.0003'],
      ['4', '0.0004'],
      ['5', '0.0005'],
    ]);
    expect(out).toContainEqual(
      expect.stringMatching(
        /^budget used up \(no top-up\): 5 updates, charged \$0\.0005 \(500 atomic\) on channel 0x[0-9a-f]{64}$/,
      ),
    );
    expect(out).toContainEqual(
      expect.stringMatching(/^attestation ok on all 5 updates \(signer 0x/),
    );
  }, 60_000);

  it('stops on Ctrl-C with the total so far', async () => {
    const interrupt = new AbortController();
    let seen = 0;
    const { code, out, err } = await run(
      ['stream', 'BTC', '--budget', '0.001', '--max-hz', '10'],
      interrupt.signal,
      (line) => {
        if (line.startsWith('BTC ')) seen += 1;
        if (seen === 2) interrupt.abort();
      },
    );
    expect(err).toEqual([]);
    expect(code).toBe(EXIT_OK);
    expect(priceLines(out)).toHaveLength(2);
    expect(out).toContainEqual(
      expect.stringMatching(
        /^interrupted: 2 updates, charged \$0\.0002 \(200 atomic\) on channel 0x/,
      ),
    );
  }, 60_000);

  it('says so when the open channel holds less than the budget, charging nothing for the stream', async () => {
    const { code, err, out } = await run(['stream', 'BTC', '--budget', '1']);
    expect(code).toBe(EXIT_FAILED);
    expect(err.at(-1)).toMatch(
      /^the channel's deposit does not cover --budget 1: .* Nothing was charged for the stream\.$/,
    );
    expect(priceLines(out)).toEqual([]);
  });

  it('refuses a budget below one update before paying anything', async () => {
    const { code, err, out } = await run(['stream', 'BTC', '--budget', '0.00005']);
    expect(code).toBe(EXIT_USAGE);
    expect(err.join('\n')).toBe(
      '--budget 0.00005 is below the price of one update ($0.0001); nothing was paid',
    );
    expect(priceLines(out)).toEqual([]);
  });

  it('says what the service refused before the 402, and pays nothing', async () => {
    const { code, err } = await run(['stream', 'NOPE1', '--budget', '0.001']);
    expect(code).toBe(EXIT_FAILED);
    expect(err[0]).toMatch(/^HTTP 404 /);
    expect(err.join('\n')).toContain('unknown_symbol');
  });
});

describe('npm run client -- stream: the command line', () => {
  it('reads symbols, budget and the two options', () => {
    expect(
      parseCommand([
        'stream',
        'BTC,eth',
        '--budget',
        '$0.01',
        '--min-move-bps',
        '5',
        '--max-hz',
        '2',
      ]),
    ).toEqual({ kind: 'stream', symbols: 'BTC,eth', budget: '0.01', minMoveBps: '5', maxHz: '2' });
  });

  it.each([
    [['stream', 'BTC'], 'stream needs --budget <USD>, e.g. --budget 0.01'],
    [
      ['stream', '--budget', '0.01'],
      'stream takes a comma list, e.g. stream BTC,ETH --budget 0.01',
    ],
    [['stream', 'BTC', '--budget', 'ten'], '--budget takes a USD amount such as 0.01 (got "ten")'],
    [['stream', 'BTC', '--budget'], '--budget takes a value'],
    [
      ['stream', 'BTC', '--budget', '1', '--max-hz', 'fast'],
      '--max-hz takes updates per second per symbol (got "fast")',
    ],
    [
      ['stream', 'BTC', '--budget', '1', '--min-move-bps', '-1'],
      '--min-move-bps takes a number of basis points (got "-1")',
    ],
    [['stream', 'BTC', '--budget', '1', '--loud'], 'stream does not take --loud'],
  ])('refuses %j: %s', (argv, problem) => {
    expect(parseCommand(argv)).toEqual({ kind: 'invalid', problem });
  });

  it('refuses --mcp and --network solana: a stream is paid through a channel over HTTP only', () => {
    for (const flag of [['--mcp'], ['--network', 'solana']]) {
      expect(parseCommand(['stream', 'BTC', '--budget', '1', ...flag])).toMatchObject({
        kind: 'refused',
      });
    }
    expect(parseCommand(['stream', 'BTC', '--budget', '1', '--batch'])).toMatchObject({
      kind: 'stream',
    });
  });
});

describe('parseSse (scripts/sse-lines.ts)', () => {
  async function eventsOf(...chunks: string[]) {
    const bytes = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(bytes.encode(chunk));
        controller.close();
      },
    });
    const events = [];
    for await (const event of parseSse(body)) events.push(event);
    return events;
  }

  it('reads named events with ids, joins data lines, skips comments and data-less events', async () => {
    expect(
      await eventsOf(
        ': keep-alive\n\nevent: open\ndata: {"a":1}\n\n',
        'id: 200\nevent: price\ndata: line one\ndata:line two\n\nevent: empty\n\n',
        'data: unnamed\n\n',
      ),
    ).toEqual([
      { event: 'open', id: undefined, data: '{"a":1}' },
      { event: 'price', id: '200', data: 'line one\nline two' },
      { event: 'message', id: '200', data: 'unnamed' },
    ]);
  });

  it('takes CRLF and CR line ends, split anywhere across chunks, even inside a CRLF', async () => {
    expect(await eventsOf('event: a\r', '\ndata: 1\r\n\r', '\nevent: b\rdata: 2\r\r')).toEqual([
      { event: 'a', id: undefined, data: '1' },
      { event: 'b', id: undefined, data: '2' },
    ]);
  });

  it('drops an event the body ends before its blank line', async () => {
    expect(await eventsOf('event: a\ndata: 1\n\nevent: b\ndata: 2\n')).toEqual([
      { event: 'a', id: undefined, data: '1' },
    ]);
  });
});
