import { Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { createClient } from 'redis';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { backoffDelay, type Backoff } from '../common/backoff.js';
import { StartupError } from '../common/startup-error.js';
import { remoteText } from '../common/remote-text.js';

export type RedisClient = ReturnType<typeof createClient>;

/** The one Redis connection of this instance, or null when REDIS_URL is unset (embedded mode). */
export const REDIS_CLIENT = Symbol('RedisClient');

/**
 * The longest one Redis command may wait for its answer. A Redis that accepts the connection but
 * does not answer would otherwise hold every request that reads the shared state for ever.
 */
export const REDIS_COMMAND_DEADLINE_MS = 2000;

/**
 * Commands waiting in the client at most: past their deadline nobody waits for them, and while a
 * connected Redis stays silent they would pile up; beyond this many a new one fails at once.
 */
const COMMANDS_QUEUE_MAX = 10_000;

/** A Redis that does not answer within this at start-up stops the start-up. */
const CONNECT_TIMEOUT_MS = 3000;
/** Reconnection delays after a lost connection. */
const RECONNECT_BACKOFF: Backoff = { baseMs: 100, maxMs: 2000 };
/** Connection errors are logged at most this often while Redis stays unreachable. */
const ERROR_LOG_EVERY_MS = 10_000;

/**
 * Connects to REDIS_URL. Unreachable at start-up: a StartupError naming the problem (never the
 * URL, which may hold a password). Lost later: the client reconnects in the background, and
 * commands issued meanwhile fail at once instead of queueing (so paid routes answer 503 right
 * away rather than hang); `isReady` says whether it is connected now.
 */
export async function connectRedis(url: string): Promise<RedisClient> {
  // loaded only here: an instance without REDIS_URL never needs the client (about 4 MB of heap)
  const { createClient } = await import('redis');
  const logger = new Logger('Redis');
  let started = false;
  let lastLogged = 0;
  const client = createClient({
    url,
    disableOfflineQueue: true,
    commandsQueueMaxLength: COMMANDS_QUEUE_MAX,
    socket: {
      connectTimeout: CONNECT_TIMEOUT_MS,
      // before start-up succeeded: no retry, connect() rejects with the cause
      reconnectStrategy: (retries: number) =>
        started ? backoffDelay(retries, RECONNECT_BACKOFF) : false,
    },
  });
  client.on('error', (error: unknown) => {
    if (!started || Date.now() - lastLogged < ERROR_LOG_EVERY_MS) return;
    lastLogged = Date.now();
    logger.error(`connection to REDIS_URL lost, reconnecting: ${remoteText(error)}`);
  });
  client.on('ready', () => {
    if (started) logger.log('connection to REDIS_URL restored');
  });
  try {
    await client.connect();
  } catch (error) {
    if (client.isOpen) client.destroy();
    throw new StartupError(
      `REDIS_URL is set but Redis cannot be reached (${remoteText(error)}). Start Redis or fix ` +
        'REDIS_URL; without REDIS_URL this instance keeps its state in memory and must run alone.',
      { cause: error },
    );
  }
  started = true;
  return client;
}

/** Closes the connection; waits for commands in flight when it is up. */
export async function closeRedis(client: RedisClient): Promise<void> {
  if (client.isReady) {
    await client.close().catch(() => {
      client.destroy();
    });
  } else if (client.isOpen) client.destroy();
}

/** The 503 a paid route answers while the shared state cannot be reached: nothing is charged. */
export function sharedStateUnavailable(error: unknown): ApiError {
  return new ApiError(
    ErrorCode.SharedStateUnavailable,
    `The shared state (payment ledger and prices, in Redis) cannot be reached right now (${remoteText(error)}); nothing was charged.`,
    { 'retry-after': '2' },
  );
}

/**
 * `command`'s answer, or the 503 `shared_state_unavailable` once `deadlineMs` passed without one.
 * The command itself stays queued in the client until Redis answers or the connection drops.
 */
export async function withinDeadline<T>(
  command: Promise<T>,
  deadlineMs: number = REDIS_COMMAND_DEADLINE_MS,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(sharedStateUnavailable(new Error(`Redis gave no answer within ${deadlineMs} ms`)));
    }, deadlineMs);
    timer.unref();
  });
  try {
    return await Promise.race([command, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs a Lua script by its digest (the script text travels once per connection), falling back
 * to sending it when Redis does not know it yet; within `deadlineMs` in all.
 */
export class RedisScript {
  private readonly sha: string;

  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  run(
    client: RedisClient,
    keys: string[],
    args: string[],
    deadlineMs: number = REDIS_COMMAND_DEADLINE_MS,
  ): Promise<unknown> {
    return withinDeadline(this.runOnce(client, keys, args), deadlineMs);
  }

  private async runOnce(client: RedisClient, keys: string[], args: string[]): Promise<unknown> {
    try {
      return await client.evalSha(this.sha, { keys, arguments: args });
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return client.eval(this.source, { keys, arguments: args });
    }
  }
}
