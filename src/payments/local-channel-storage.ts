import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import type {
  Channel,
  ChannelStorage,
  ChannelUpdateResult,
} from '@x402/evm/batch-settlement/server';

const CHANNEL_ID = /^0x[0-9a-f]{64}$/;
/** The journal is rewritten to one line per channel when it grows past this. */
const COMPACT_AFTER_BYTES = 64 * 1024 * 1024;
/** Data directories in use by a storage of this process: one owner each. */
const ownedDirectories = new Set<string>();

/** One line of the journal: a channel's new record, or null when it was deleted. */
interface JournalEntry {
  readonly id: string;
  readonly channel: Channel | null;
}

/**
 * Batch-settlement channel state for one process without Redis: every record in memory, each
 * change appended to `<dir>/channels.journal` (one JSON line, one write) before it counts, so a
 * voucher is never only in memory and a restart replays the journal. The journal is rewritten
 * to one line per channel at start and whenever it passes 64 MB.
 *
 * Why not the SDK's FileChannelStorage: it takes a lock file and rewrites a file per change
 * (about nine file operations per update, two updates per voucher), and that file work was the
 * largest server cost of a voucher. Here one process owns the directory (a second process or
 * instance is refused at start: several instances share state through REDIS_URL), so a
 * per-channel queue in memory serializes updates and a change costs one append. Records the
 * SDK's file storage left in `<dir>/server/*.json` are taken over at the first start.
 *
 * A crash in the middle of an append leaves a torn last line: that change never counted (its
 * caller was still waiting), so replay skips it.
 */
export class LocalChannelStorage implements ChannelStorage {
  private readonly channels = new Map<string, Channel>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly root: string;
  private readonly journalFile: string;
  private readonly ownerFile: string;
  private journal: number;
  private journalBytes = 0;
  private closed = false;

  constructor(dataDir: string) {
    this.root = path.resolve(dataDir);
    this.journalFile = path.join(this.root, 'channels.journal');
    this.ownerFile = path.join(this.root, 'owner.pid');
    mkdirSync(this.root, { recursive: true });
    this.claimDirectory();
    const legacy = this.readLegacyFiles();
    this.replayJournal();
    this.journal = this.compact();
    for (const file of legacy) rmSync(file, { force: true });
  }

  get(channelId: string): Promise<Channel | undefined> {
    return Promise.resolve(this.channels.get(keyOf(channelId)));
  }

  list(): Promise<Channel[]> {
    return Promise.resolve(
      [...this.channels.values()].sort((a, b) => a.channelId.localeCompare(b.channelId)),
    );
  }

  /** Runs after every earlier update of the same channel; the journal has it before it counts. */
  updateChannel(
    channelId: string,
    update: (current: Channel | undefined) => Channel | undefined,
  ): Promise<ChannelUpdateResult> {
    const key = keyOf(channelId);
    const previous = this.queues.get(key) ?? Promise.resolve();
    const next = previous.then(
      () => this.apply(key, update),
      () => this.apply(key, update),
    );
    this.queues.set(key, next);
    void next
      .finally(() => {
        if (this.queues.get(key) === next) this.queues.delete(key);
      })
      .catch(() => undefined);
    return next;
  }

  /** Gives the directory up for another process, after the updates under way. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled(this.queues.values());
    closeSync(this.journal);
    rmSync(this.ownerFile, { force: true });
    ownedDirectories.delete(this.root);
  }

  private apply(
    key: string,
    update: (current: Channel | undefined) => Channel | undefined,
  ): ChannelUpdateResult {
    if (this.closed) throw new Error('the channel storage is closed');
    const current = this.channels.get(key);
    const next = update(current);
    if (next === current) return { channel: current, status: 'unchanged' };
    if (next === undefined && current === undefined)
      return { channel: undefined, status: 'unchanged' };
    this.append({ id: key, channel: next ?? null });
    if (next === undefined) {
      this.channels.delete(key);
      return { channel: undefined, status: 'deleted' };
    }
    this.channels.set(key, next);
    return { channel: next, status: 'updated' };
  }

  private append(entry: JournalEntry): void {
    const line = `${JSON.stringify(entry)}\n`;
    writeSync(this.journal, line);
    this.journalBytes += Buffer.byteLength(line);
    if (this.journalBytes > COMPACT_AFTER_BYTES) {
      closeSync(this.journal);
      this.journal = this.compact();
    }
  }

  /** Rewrites the journal as one line per live channel (atomically) and opens it for appends. */
  private compact(): number {
    const temporary = `${this.journalFile}.${process.pid}.tmp`;
    const lines = [...this.channels].map(([id, channel]) => `${JSON.stringify({ id, channel })}\n`);
    writeFileSync(temporary, lines.join(''));
    renameSync(temporary, this.journalFile);
    const journal = openSync(this.journalFile, 'a');
    this.journalBytes = fstatSync(journal).size;
    return journal;
  }

  private replayJournal(): void {
    if (!existsSync(this.journalFile)) return;
    const lines = readFileSync(this.journalFile, 'utf8').split('\n');
    lines.forEach((line, index) => {
      if (line === '') return;
      let entry: JournalEntry;
      try {
        entry = JSON.parse(line) as JournalEntry;
      } catch (error) {
        // a torn last line is a change that never counted; a torn line before it is damage
        if (index >= lines.length - 2) return;
        throw new Error(`${this.journalFile} line ${index + 1} is damaged`, { cause: error });
      }
      if (entry.channel === null) this.channels.delete(entry.id);
      else this.channels.set(entry.id, entry.channel);
    });
  }

  /** Records of the SDK's file storage (`server/<id>.json`), taken over once. */
  private readLegacyFiles(): string[] {
    const directory = path.join(this.root, 'server');
    if (!existsSync(directory)) return [];
    const files = readdirSync(directory)
      .filter((name) => name.endsWith('.json'))
      .map((name) => path.join(directory, name));
    for (const file of files) {
      const channel = JSON.parse(readFileSync(file, 'utf8')) as Channel;
      this.channels.set(keyOf(channel.channelId), channel);
    }
    return files;
  }

  /**
   * One owner per directory: a second storage in this process, or a live process that holds it,
   * is refused; a pid file left by a process that died is taken over.
   */
  private claimDirectory(): void {
    if (ownedDirectories.has(this.root)) {
      throw new Error(`${this.root} is already used by this process's channel storage`);
    }
    try {
      const owner = Number(readFileSync(this.ownerFile, 'utf8'));
      if (Number.isSafeInteger(owner) && owner !== process.pid && isAlive(owner)) {
        throw new Error(
          `${this.root} holds the batch-settlement channels of process ${owner}; one process per data directory (set REDIS_URL to share channels between instances)`,
        );
      }
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
    writeFileSync(this.ownerFile, String(process.pid));
    ownedDirectories.add(this.root);
  }
}

function keyOf(channelId: string): string {
  const key = channelId.toLowerCase();
  if (!CHANNEL_ID.test(key)) throw new Error(`not a channel id: ${channelId}`);
  return key;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
