import {
  closeSync,
  existsSync,
  fdatasync,
  fstatSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  write,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Channel } from '@x402/evm/batch-settlement/server';

const writeAt = promisify(write);
const syncData = promisify(fdatasync);

/** The journal is rewritten to one line per channel when it grows past this. */
const COMPACT_AFTER_BYTES = 64 * 1024 * 1024;

/** One line of the journal: a channel's new record, or null when it was deleted. */
export interface JournalEntry {
  readonly id: string;
  readonly channel: Channel | null;
}

/** A change waiting for its line to be on disk. */
interface WaitingChange {
  readonly line: Buffer;
  /** Applies the change in memory, once its line is on disk. */
  readonly commit: () => void;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The append-only journal of one channel directory (`channels.journal`, one JSON line per
 * change). Changes are group-committed: every change waiting when a flush starts goes out in one
 * write and one `fdatasync`, and each counts (its `commit` runs, its promise resolves) only once
 * its line is on disk, so a voucher outlives a crash of the process or of the machine. A failed
 * flush stops the journal for good: appending after a line that may be torn would damage it.
 * Past 64 MB it is rewritten (atomically) to one line per live channel.
 */
export class ChannelJournal {
  private fd = -1;
  private bytes = 0;
  private waiting: WaitingChange[] = [];
  private flushing: Promise<void> | undefined;
  private failure: unknown;

  constructor(
    private readonly file: string,
    /** Every live channel as memory holds it now: what a compaction writes. */
    private readonly live: () => Iterable<[string, Channel]>,
    private readonly onCompactFailure: (error: unknown) => void,
    /** Once, when a failed flush stops the journal. */
    private readonly onStop: (error: unknown) => void,
  ) {}

  /** The entries on disk, in order; a torn last line (a change that never counted) is skipped. */
  replay(): JournalEntry[] {
    if (!existsSync(this.file)) return [];
    const lines = readFileSync(this.file, 'utf8').split('\n');
    const entries: JournalEntry[] = [];
    lines.forEach((line, index) => {
      if (line === '') return;
      try {
        entries.push(JSON.parse(line) as JournalEntry);
      } catch (error) {
        // a torn last line is a change that never counted; a torn line before it is damage
        if (index >= lines.length - 2) return;
        throw new Error(`${this.file} line ${index + 1} is damaged`, { cause: error });
      }
    });
    return entries;
  }

  /** Compacts what memory holds now and opens the journal for appends. */
  open(): void {
    this.fd = this.compact();
  }

  /** Resolves once `entry` is on disk and `commit` has run; rejects (nothing committed) if not. */
  append(entry: JournalEntry, commit: () => void): Promise<void> {
    if (this.failure !== undefined) {
      return Promise.reject(new Error(`${this.file} stopped after a failed write`));
    }
    return new Promise((resolve, reject) => {
      this.waiting.push({
        line: Buffer.from(`${JSON.stringify(entry)}\n`),
        commit,
        resolve,
        reject,
      });
      this.flushing ??= this.flush();
    });
  }

  /** After the changes under way. */
  async close(): Promise<void> {
    await this.flushing;
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }

  private async flush(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting;
      this.waiting = [];
      try {
        if (this.failure !== undefined) {
          throw new Error(`${this.file} stopped after a failed write`, { cause: this.failure });
        }
        const data = Buffer.concat(batch.map((change) => change.line));
        for (let written = 0; written < data.length;) {
          written += (await writeAt(this.fd, data, written, data.length - written, null))
            .bytesWritten;
        }
        await syncData(this.fd);
        this.bytes += data.length;
      } catch (error) {
        if (this.failure === undefined) {
          this.failure = error;
          this.onStop(error);
        }
        for (const change of batch) change.reject(error);
        continue;
      }
      // memory follows the disk before any later flush or compaction reads it
      for (const change of batch) change.commit();
      this.compactIfLarge();
      for (const change of batch) change.resolve();
    }
    this.flushing = undefined;
  }

  /** Past 64 MB, between flushes: everything on disk is in memory. A failure is retried later. */
  private compactIfLarge(): void {
    if (this.bytes <= COMPACT_AFTER_BYTES) return;
    try {
      const previous = this.fd;
      this.fd = this.compact();
      closeSync(previous);
    } catch (error) {
      this.onCompactFailure(error);
    }
  }

  /** Rewrites the journal as one line per live channel (synced, then renamed over it). */
  private compact(): number {
    const temporary = `${this.file}.${process.pid}.tmp`;
    const lines = [...this.live()].map(([id, channel]) => `${JSON.stringify({ id, channel })}\n`);
    const fd = openSync(temporary, 'w');
    try {
      const data = Buffer.from(lines.join(''));
      for (let written = 0; written < data.length;) {
        written += writeSync(fd, data, written);
      }
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, this.file);
    syncDirectory(path.dirname(this.file));
    const journal = openSync(this.file, 'a');
    this.bytes = fstatSync(journal).size;
    return journal;
  }
}

/** A rename is durable once its directory is synced. */
function syncDirectory(directory: string): void {
  const fd = openSync(directory, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
