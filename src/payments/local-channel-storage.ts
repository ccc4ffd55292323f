import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type {
  Channel,
  ChannelStorage,
  ChannelUpdateResult,
} from '@x402/evm/batch-settlement/server';

const CHANNEL_ID = /^0x[0-9a-f]{64}$/;
/** Data directories in use by a storage of this process: one owner each. */
const ownedDirectories = new Set<string>();

/**
 * Batch-settlement channel state for one process without Redis: every record in memory, each
 * change written through to `<dir>/server/<channelId>.json` (the layout of the SDK's file
 * storage, so existing data directories carry over) with an atomic rename before the change
 * counts. A voucher is never only in memory; a restart reads the directory back.
 *
 * Why not the SDK's FileChannelStorage: it takes a lock file and rereads the record on every
 * change (about nine file operations per update, two updates per voucher), and that file work
 * was the largest server cost of a voucher. Here one process owns the directory — a second
 * process or instance is refused at start (several instances share state through REDIS_URL) —
 * so a per-channel queue in memory serializes updates and a change costs one write and one
 * rename.
 */
export class LocalChannelStorage implements ChannelStorage {
  private readonly channels = new Map<string, Channel>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly directory: string;
  private readonly ownerFile: string;
  private closed = false;

  constructor(dataDir: string) {
    this.directory = path.resolve(dataDir, 'server');
    this.ownerFile = path.join(path.resolve(dataDir), 'owner.pid');
    mkdirSync(this.directory, { recursive: true });
    this.claimDirectory(path.resolve(dataDir));
    for (const name of readdirSync(this.directory)) {
      if (!name.endsWith('.json')) continue;
      const channel = JSON.parse(readFileSync(path.join(this.directory, name), 'utf8')) as Channel;
      this.channels.set(channel.channelId.toLowerCase(), channel);
    }
  }

  get(channelId: string): Promise<Channel | undefined> {
    return Promise.resolve(this.channels.get(keyOf(channelId)));
  }

  list(): Promise<Channel[]> {
    return Promise.resolve(
      [...this.channels.values()].sort((a, b) => a.channelId.localeCompare(b.channelId)),
    );
  }

  /** Runs after every earlier update of the same channel; the file is written before it counts. */
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

  /** Gives the directory up for another process (after the last update). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled(this.queues.values());
    rmSync(this.ownerFile, { force: true });
    ownedDirectories.delete(path.dirname(this.ownerFile));
  }

  private apply(
    key: string,
    update: (current: Channel | undefined) => Channel | undefined,
  ): ChannelUpdateResult {
    if (this.closed) throw new Error('the channel storage is closed');
    const current = this.channels.get(key);
    const next = update(current);
    if (next === current) return { channel: current, status: 'unchanged' };
    const file = path.join(this.directory, `${key}.json`);
    if (next === undefined) {
      rmSync(file, { force: true });
      this.channels.delete(key);
      return { channel: undefined, status: current === undefined ? 'unchanged' : 'deleted' };
    }
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(next)}\n`);
    renameSync(temporary, file);
    this.channels.set(key, next);
    return { channel: next, status: 'updated' };
  }

  /**
   * One owner per directory: a second storage in this process, or a live process that holds it,
   * is refused; a pid file left by a process that died is taken over.
   */
  private claimDirectory(root: string): void {
    if (ownedDirectories.has(root)) {
      throw new Error(`${root} is already used by this process's channel storage`);
    }
    try {
      const owner = Number(readFileSync(this.ownerFile, 'utf8'));
      if (Number.isSafeInteger(owner) && owner !== process.pid && isAlive(owner)) {
        throw new Error(
          `${root} holds the batch-settlement channels of process ${owner}; one process per data directory (set REDIS_URL to share channels between instances)`,
        );
      }
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
    const handle = openSync(this.ownerFile, 'w');
    writeFileSync(handle, String(process.pid));
    closeSync(handle);
    ownedDirectories.add(root);
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
