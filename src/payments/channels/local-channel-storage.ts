import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Logger } from '@nestjs/common';
import path from 'node:path';
import type {
  Channel,
  ChannelStorage,
  ChannelUpdateResult,
} from '@x402/evm/batch-settlement/server';
import { remoteText } from '../../common/remote-text.js';
import { ChannelJournal } from './channel-journal.js';
import { onlyReservation } from './channel-holds.js';

const CHANNEL_ID = /^0x[0-9a-f]{64}$/;
/** The owner touches its owner file this often; one untouched for OWNER_STALE_MS is taken over. */
const OWNER_HEARTBEAT_MS = 5_000;
const OWNER_STALE_MS = 30_000;
/** Data directories in use by a storage of this process: one owner each. */
const ownedDirectories = new Set<string>();

/**
 * Batch-settlement channel state for one process without Redis: every record in memory, each
 * change that counts appended to `<dir>/channels.journal` (ChannelJournal: group-committed, one
 * write and one `fdatasync` for every change waiting) before it counts, so a voucher is never
 * only in memory and a restart replays the journal. The journal is rewritten to one line per
 * channel at start and whenever it passes 64 MB.
 *
 * One change per voucher reaches the disk: the charge. A request's reservation (taken before the
 * handler runs, let go if it fails) lives in memory only (onlyReservation): it ends with its
 * request, so a restart has no use for it. A refund's hold is journaled.
 *
 * Why not the SDK's FileChannelStorage: it takes a lock file and rewrites a file per change
 * (about nine file operations per update, two updates per voucher). Here one process owns the
 * directory (a second process or instance is refused at start: several instances share state
 * through REDIS_URL), so a per-channel queue in memory serializes updates. Records the SDK's
 * file storage left in `<dir>/server/*.json` are taken over at the first start.
 */
export class LocalChannelStorage implements ChannelStorage {
  private readonly channels = new Map<string, Channel>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly root: string;
  private readonly journal: ChannelJournal;
  private readonly ownerFile: string;
  private closed = false;
  private readonly token = randomUUID();
  private readonly logger = new Logger('BatchSettlement');
  /** Another process took the directory over: nothing more is recorded here. */
  private displaced = false;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(dataDir: string) {
    this.root = path.resolve(dataDir);
    const journalFile = path.join(this.root, 'channels.journal');
    this.journal = new ChannelJournal(
      journalFile,
      () => this.channels,
      (error) => {
        this.logger.warn(`could not compact ${journalFile}: ${remoteText(error)}`);
      },
      (error) => {
        this.logger.error(
          `could not write ${journalFile} (${remoteText(error)}); batch-settlement payments fail here until restart`,
        );
      },
    );
    this.ownerFile = path.join(this.root, 'owner.pid');
    mkdirSync(this.root, { recursive: true });
    this.claimDirectory();
    try {
      const legacy = this.readLegacyFiles();
      for (const entry of this.journal.replay()) {
        if (entry.channel === null) this.channels.delete(entry.id);
        else this.channels.set(entry.id, entry.channel);
      }
      this.journal.open();
      for (const file of legacy) rmSync(file, { force: true });
    } catch (error) {
      this.releaseDirectory();
      throw error;
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
    await this.journal.close();
    this.releaseDirectory();
  }

  private releaseDirectory(): void {
    clearInterval(this.heartbeat);
    if (this.ownsFile()) rmSync(this.ownerFile, { force: true });
    ownedDirectories.delete(this.root);
  }

  private async apply(
    key: string,
    update: (current: Channel | undefined) => Channel | undefined,
  ): Promise<ChannelUpdateResult> {
    if (this.closed) throw new Error('the channel storage is closed');
    if (this.displaced) {
      throw new Error(`another process took ${this.root} over: no channel change is recorded here`);
    }
    const current = this.channels.get(key);
    const next = update(current);
    if (next === current) return { channel: current, status: 'unchanged' };
    if (next === undefined && current === undefined)
      return { channel: undefined, status: 'unchanged' };
    const commit = (): void => {
      if (next === undefined) this.channels.delete(key);
      else this.channels.set(key, next);
    };
    if (onlyReservation(current, next)) commit();
    else await this.journal.append({ id: key, channel: next ?? null }, commit);
    return next === undefined
      ? { channel: undefined, status: 'deleted' }
      : { channel: next, status: 'updated' };
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
   * One owner per directory. The owner file names the host, pid and a token, and the owner
   * touches it every few seconds. Refused: a second storage in this process, a live process on
   * this host, or any owner elsewhere (another container on a shared volume: pids say nothing
   * there) that touched the file lately. Taken over: a file left by a process that died on this
   * host (or by this very pid: a container restarted), or one not touched for a while.
   */
  private claimDirectory(): void {
    if (ownedDirectories.has(this.root)) {
      throw new Error(`${this.root} is already used by this process's channel storage`);
    }
    const owner = this.readOwner();
    if (owner !== undefined && !this.mayTakeOver(owner)) {
      throw new Error(
        `${this.root} holds the batch-settlement channels of process ${owner.pid} on ${owner.host}; ` +
          'one process per data directory (set REDIS_URL to share channels between instances)',
      );
    }
    writeFileSync(this.ownerFile, `${hostname()} ${process.pid} ${this.token}`);
    ownedDirectories.add(this.root);
    this.heartbeat = setInterval(() => {
      this.keepOwnership();
    }, OWNER_HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /**
   * Touches the owner file while it is still ours. If another process took the directory over
   * (this one stalled past OWNER_STALE_MS, say), this one stops recording changes: two writers of
   * one journal would each sell the same voucher.
   */
  private keepOwnership(): void {
    try {
      if (!this.ownsFile()) {
        this.displaced = true;
        clearInterval(this.heartbeat);
        this.logger.error(
          `another process took ${this.root} over; batch-settlement payments fail here until restart`,
        );
        return;
      }
      const now = new Date();
      utimesSync(this.ownerFile, now, now);
    } catch (error) {
      this.logger.warn(`could not touch ${this.ownerFile}: ${remoteText(error)}`);
    }
  }

  private ownsFile(): boolean {
    try {
      return readFileSync(this.ownerFile, 'utf8').split(' ')[2] === this.token;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  private readOwner(): { host: string; pid: number; touchedAt: number } | undefined {
    try {
      const [host = '', pid = ''] = readFileSync(this.ownerFile, 'utf8').split(' ');
      return { host, pid: Number(pid), touchedAt: statSync(this.ownerFile).mtimeMs };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  private mayTakeOver(owner: { host: string; pid: number; touchedAt: number }): boolean {
    if (Date.now() - owner.touchedAt > OWNER_STALE_MS) return true;
    if (owner.host !== hostname()) return false;
    return owner.pid === process.pid || !isAlive(owner.pid);
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
