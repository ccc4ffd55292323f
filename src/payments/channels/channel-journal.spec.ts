import { jest } from '@jest/globals';
import { closeSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ChannelJournal } from './channel-journal.js';

describe('ChannelJournal', () => {
  it('counts a change only once on disk, and stops for good after a failed write', async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'journal-')), 'channels.journal');
    const onStop = jest.fn();
    const journal = new ChannelJournal(file, () => [], jest.fn(), onStop);
    journal.open();
    const committed: string[] = [];
    await journal.append({ id: 'a', channel: null }, () => committed.push('a'));
    expect(committed).toEqual(['a']);
    expect(readFileSync(file, 'utf8')).toBe('{"id":"a","channel":null}\n');

    // the disk fails under it (here: its file descriptor goes away)
    const open = journal as unknown as { fd: number };
    closeSync(open.fd);
    await expect(
      journal.append({ id: 'b', channel: null }, () => committed.push('b')),
    ).rejects.toThrow();
    await expect(
      journal.append({ id: 'c', channel: null }, () => committed.push('c')),
    ).rejects.toThrow(/stopped after a failed write/);
    expect(committed).toEqual(['a']);
    expect(onStop).toHaveBeenCalledTimes(1);
    open.fd = -1;
    await journal.close();
  });
});
