import { jest } from '@jest/globals';
import * as fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Every fdatasync the journal asks for, held until the test lets it run. */
const syncs: (() => void)[] = [];
jest.unstable_mockModule('node:fs', () => ({
  ...fs,
  fdatasync: (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => {
    syncs.push(() => {
      fs.fdatasync(fd, done);
    });
  },
}));
const { ChannelJournal } = await import('./channel-journal.js');

/** Lets pending I/O callbacks and promise reactions run. */
const drain = async (): Promise<void> => {
  for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

/** Waits until the journal has asked for `count` syncs (its write runs on the thread pool). */
async function syncsAsked(count: number): Promise<void> {
  for (let waited = 0; syncs.length < count; waited += 1) {
    if (waited > 2000) throw new Error(`only ${String(syncs.length)} fdatasync asked for`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await drain();
}

describe('ChannelJournal group commit', () => {
  it('gives concurrent changes one fdatasync, and answers each only after its own line is synced', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'journal-')), 'channels.journal');
    const journal = new ChannelJournal(file, () => [], jest.fn(), jest.fn());
    journal.open();
    const done: string[] = [];
    const committed: string[] = [];
    const append = (id: string): Promise<void> =>
      journal
        .append({ id, channel: null }, () => committed.push(id))
        .then(() => {
          done.push(id);
        });

    const first = append('a');
    await syncsAsked(1);
    // three vouchers arrive while the first one's sync is under way
    const rest = [append('b'), append('c'), append('d')];
    await drain();
    expect(syncs).toHaveLength(1);
    expect(done).toEqual([]);
    expect(committed).toEqual([]);

    syncs[0]?.();
    await first;
    expect(done).toEqual(['a']);
    await syncsAsked(2);
    // the three go out in one write and one fdatasync, and are not answered before it ends
    expect(syncs).toHaveLength(2);
    expect(fs.readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(4);
    expect(done).toEqual(['a']);
    expect(committed).toEqual(['a']);

    syncs[1]?.();
    await Promise.all(rest);
    expect(done).toEqual(['a', 'b', 'c', 'd']);
    expect(committed).toEqual(['a', 'b', 'c', 'd']);
    expect(syncs).toHaveLength(2);
    await journal.close();
  });
});
