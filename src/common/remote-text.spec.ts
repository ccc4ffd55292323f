import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_REMOTE_TEXT_LENGTH, remoteText } from './remote-text.js';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

describe('remoteText', () => {
  it('keeps ordinary text as it is', () => {
    expect(remoteText('HTTP 503')).toBe('HTTP 503');
  });

  it('puts line breaks, tabs and other control characters on one line', () => {
    expect(remoteText('a\nb\r\nc\td\u0000e\u2028f')).toBe('a b c d e f');
  });

  it('cannot forge a log line', () => {
    const forged = 'boom\n[Nest] 1  - 11/27/2026, 6:00:00 AM     LOG [SoldAnswers] payment settled';
    expect(remoteText(forged)).not.toContain('\n');
  });

  it('drops ANSI escape sequences', () => {
    expect(remoteText('\u001b[31mred\u001b[0m and \u001b[2Kcleared')).toBe('red and cleared');
  });

  it.each([
    ['fetch failed for https://bob:hunter2@mirror.example/api/v3/ticker', 'fetch failed for <url>'],
    ['URL: https://base-mainnet.g.provider.example/v2/SECRETKEY', 'URL: <url>'],
    ['connect to redis://:pass@10.0.0.5:6379/0 refused', 'connect to <url> refused'],
    ['wss://stream.example/ws?token=abc closed', '<url> closed'],
  ])('replaces every URL: %j', (text, shown) => {
    expect(remoteText(text)).toBe(shown);
  });

  it('caps the length and marks the cut', () => {
    const shown = remoteText('y'.repeat(1000));
    expect(shown).toHaveLength(MAX_REMOTE_TEXT_LENGTH);
    expect(shown.endsWith('…')).toBe(true);
  });

  it("gives an error's message, the first of an AggregateError's", () => {
    expect(remoteText(new Error('refused\nagain'))).toBe('refused again');
    expect(remoteText(new AggregateError([new Error('ECONNREFUSED 127.0.0.1:6379')]))).toBe(
      'ECONNREFUSED 127.0.0.1:6379',
    );
    expect(remoteText({})).toBe('unknown error');
  });

  it("gives a viem error's short message and the remote's details, never its URL or request body", () => {
    const viemLike = Object.assign(
      new Error(
        'HTTP request failed.\n\nStatus: 500\nURL: http://rpc.example/KEY\nRequest body: {"method":"eth_call"}',
      ),
      { shortMessage: 'HTTP request failed.', details: 'upstream\nerror' },
    );
    expect(remoteText(viemLike)).toBe('HTTP request failed. upstream error');
  });
});

describe('the service logs remote text only through remoteText', () => {
  it('no source interpolates an error as String(error) into a log line or a message', () => {
    const sources = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter(
      (file) => file.endsWith('.ts') && !file.endsWith('spec.ts'),
    );
    expect(sources.length).toBeGreaterThan(100);
    const offending = sources.filter((file) =>
      /\$\{String\((error|cause|err)\)\}/.test(readFileSync(path.join(SRC, file), 'utf8')),
    );
    expect(offending).toEqual([]);
  });
});
