import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { ApiError, ErrorCode } from '../common/api-error.js';
import type { PriceStream } from './price-stream.js';
import { STREAMS_SETTINGS, type StreamsSettings } from './streams.settings.js';

/** How long shutdown waits for the open streams to say `end` and close. */
const SHUTDOWN_WAIT_MS = 5_000;

/** A stream's place in the registry, held from before its payment is checked until it closes. */
export interface StreamSlot {
  /** Counts the slot against `payer` (throws 429 past the per-payer limit). */
  admit(payer: string): void;
  /** The stream opened: it is findable by id (top-ups) until it closes. */
  bind(stream: PriceStream): void;
  release(): void;
}

/**
 * The open streams of this instance, with the operator's limits (per instance: 503, per client
 * address and per payer: 429, all before any payment is verified) and a clean shutdown: every stream gets `end`
 * shutdown while the app closes, before the channel stores do (this module is destroyed first).
 */
@Injectable()
export class StreamRegistry implements OnModuleDestroy {
  private readonly streams = new Map<string, PriceStream>();
  private readonly payers = new Map<string, number>();
  private readonly clients = new Map<string, number>();
  private slots = 0;
  private closing = false;

  constructor(@Inject(STREAMS_SETTINGS.token) private readonly settings: StreamsSettings) {}

  /**
   * A slot on this instance for a stream from `client` (its address): 503 when the instance
   * serves its most streams (or is stopping), 429 when the address has its most open.
   */
  reserve(client: string): StreamSlot {
    if (this.closing || this.slots >= this.settings.perInstance) {
      throw new ApiError(
        ErrorCode.StreamCapacity,
        `This instance serves its most streams (${this.settings.perInstance}); retry later or elsewhere.`,
        { 'retry-after': '5' },
      );
    }
    const fromClient = this.clients.get(client) ?? 0;
    if (fromClient >= this.settings.perClient) {
      throw new ApiError(
        ErrorCode.StreamLimit,
        `${client} has ${fromClient} streams open, the most one client address may have (${this.settings.perClient}).`,
        { 'retry-after': '5' },
      );
    }
    this.slots += 1;
    this.clients.set(client, fromClient + 1);
    let payer: string | undefined;
    let bound: PriceStream | undefined;
    let released = false;
    return {
      admit: (who) => {
        const open = this.payers.get(who) ?? 0;
        if (open >= this.settings.perPayer) {
          throw new ApiError(
            ErrorCode.StreamLimit,
            `${who} has ${open} streams open, the most one payer may have (${this.settings.perPayer}).`,
            { 'retry-after': '5' },
          );
        }
        payer = who;
        this.payers.set(who, open + 1);
      },
      bind: (stream) => {
        bound = stream;
        this.streams.set(stream.id, stream);
      },
      release: () => {
        if (released) return;
        released = true;
        this.slots -= 1;
        giveBack(this.clients, client);
        if (bound !== undefined) this.streams.delete(bound.id);
        if (payer !== undefined) giveBack(this.payers, payer);
      },
    };
  }

  get(streamId: string): PriceStream | undefined {
    return this.streams.get(streamId);
  }

  get size(): number {
    return this.streams.size;
  }

  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    const open = [...this.streams.values()];
    for (const stream of open) stream.end('shutdown');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(open.map((stream) => stream.run())),
      new Promise((resolve) => {
        timer = setTimeout(resolve, SHUTDOWN_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
  }
}

/** One open stream fewer for `key`; a key with none left is forgotten. */
function giveBack(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left <= 0) counts.delete(key);
  else counts.set(key, left);
}
