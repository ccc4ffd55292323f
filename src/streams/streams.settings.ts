import { IsInt, Max, Min } from 'class-validator';
import type { SettingsSection } from '../config/settings.js';

/** The limits an operator sets on paid price streams (GET /v1/stream/{symbols}). */
export interface StreamsSettings {
  /** Open streams one payer may have on one instance. */
  readonly perPayer: number;
  /** Open streams one instance serves; below HTTP_MAX_CONNECTIONS (0 in the variable: half of it). */
  readonly perInstance: number;
  /** Open streams one client address may have on one instance, counted before any payment. */
  readonly perClient: number;
  /** A stream that wrote no event for this long ends (`end` idle). */
  readonly idleMs: number;
  /** A stream that charged nothing for this long ends (`end` idle), its wait for a top-up aside. */
  readonly unchargedMs: number;
  /** A reader that took nothing written to it for this long is cut off. */
  readonly stallMs: number;
  /** The largest budget one voucher may cover, atomic units of the payment token. */
  readonly maxBudget: bigint;
  /** How long a stream whose budget is used up waits for a top-up before it ends. */
  readonly topUpWaitMs: number;
  /** A `: keep-alive` comment after this long without a write. */
  readonly keepAliveMs: number;
}

class StreamsVariables {
  @IsInt()
  @Min(1)
  @Max(1000)
  STREAM_MAX_PER_PAYER = 5;

  /** 0: half of HTTP_MAX_CONNECTIONS (loadConfig resolves it and checks it is below). */
  @IsInt()
  @Min(0)
  @Max(100_000)
  STREAM_MAX_PER_INSTANCE = 0;

  @IsInt()
  @Min(1)
  @Max(100_000)
  STREAM_MAX_PER_CLIENT = 10;

  @IsInt()
  @Min(1000)
  @Max(86_400_000)
  STREAM_IDLE_MS = 300_000;

  @IsInt()
  @Min(1000)
  @Max(86_400_000)
  STREAM_UNCHARGED_MS = 60_000;

  @IsInt()
  @Min(1000)
  @Max(600_000)
  STREAM_STALL_MS = 15_000;

  @IsInt()
  @Min(100)
  @Max(1_000_000_000)
  STREAM_MAX_BUDGET = 1_000_000;

  @IsInt()
  @Min(100)
  @Max(600_000)
  STREAM_TOPUP_WAIT_MS = 30_000;

  @IsInt()
  @Min(100)
  @Max(300_000)
  STREAM_KEEPALIVE_MS = 15_000;
}

export const STREAMS_SETTINGS: SettingsSection<StreamsVariables, StreamsSettings> = {
  token: Symbol('StreamsSettings'),
  variables: StreamsVariables,
  build: (variables) => ({
    perPayer: variables.STREAM_MAX_PER_PAYER,
    perInstance: variables.STREAM_MAX_PER_INSTANCE,
    perClient: variables.STREAM_MAX_PER_CLIENT,
    idleMs: variables.STREAM_IDLE_MS,
    unchargedMs: variables.STREAM_UNCHARGED_MS,
    stallMs: variables.STREAM_STALL_MS,
    maxBudget: BigInt(variables.STREAM_MAX_BUDGET),
    topUpWaitMs: variables.STREAM_TOPUP_WAIT_MS,
    keepAliveMs: variables.STREAM_KEEPALIVE_MS,
  }),
};

/**
 * `streams` with its per-instance limit resolved against the server's connection limit: unset
 * (0) it is half of it; either way it must stay below it, so streams (each holding a connection)
 * never take every connection the server accepts. A problem is recorded, naming both variables.
 */
export function streamsWithinConnections(
  streams: StreamsSettings,
  maxConnections: number,
  problems: string[],
): StreamsSettings {
  const perInstance =
    streams.perInstance === 0 ? Math.floor(maxConnections / 2) : streams.perInstance;
  if (perInstance < 1 || perInstance >= maxConnections) {
    problems.push(
      `STREAM_MAX_PER_INSTANCE (${perInstance}${streams.perInstance === 0 ? ', half of HTTP_MAX_CONNECTIONS' : ''}) must be at least 1 and below HTTP_MAX_CONNECTIONS (${maxConnections}): every stream holds a connection, and the rest must stay free for other requests`,
    );
  }
  return { ...streams, perInstance };
}
