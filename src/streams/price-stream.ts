import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Logger } from '@nestjs/common';
import type { PriceChange, PriceChanges } from '../aggregation/price-changes.js';
import { remoteText } from '../common/remote-text.js';
import type { MeteredSale } from '../payments/index.js';
import type { StreamsSettings } from './streams.settings.js';
import { SocketWriter } from './socket-writer.js';
import { UpdateCoalescer } from './update-coalescer.js';

/** How long an ending stream's reader has to take what is written before its socket is cut. */
const END_GRACE_MS = 5_000;

/** Why a stream ends, as its `end` event says. */
export type EndReason =
  'budget_exhausted' | 'idle' | 'shutdown' | 'channel_changed' | 'client_gone';

/** A reconnect's update to re-send free: the charge's id and the update it delivered. */
export interface Resend {
  readonly id: string;
  readonly change: PriceChange;
}

/** What a charge keeps of the update it delivers, to re-send exactly that update once. */
export function keptChange(change: PriceChange): string {
  const { symbol, price, timestamp, venues, spread, oldestInputAt } = change;
  return JSON.stringify({ symbol, price, timestamp, venues, spread, oldestInputAt });
}

/** The update a charge kept (keptChange), or undefined when the text is not one. */
export function changeOfKept(text: string): PriceChange | undefined {
  let kept: unknown;
  try {
    kept = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof kept !== 'object' || kept === null) return undefined;
  const { symbol, price, timestamp, venues, spread, oldestInputAt } = kept as Record<
    string,
    unknown
  >;
  if (
    typeof symbol !== 'string' ||
    typeof price !== 'number' ||
    typeof timestamp !== 'number' ||
    typeof venues !== 'number' ||
    (spread !== null && typeof spread !== 'number') ||
    typeof oldestInputAt !== 'number'
  ) {
    return undefined;
  }
  return { symbol, price, timestamp, venues, spread, oldestInputAt };
}

/** What one stream serves: its symbols and how often, from the checked request. */
export interface StreamRequest {
  readonly symbols: readonly string[];
  readonly minMoveBps: number;
  readonly maxHz: number;
}

/** What a stream needs besides its sale and socket. */
export interface StreamDeps {
  readonly changes: PriceChanges;
  readonly settings: StreamsSettings;
  /** The one-symbol ticker answer's attestation for a change; undefined with attestation off. */
  readonly attest: (change: PriceChange) => Promise<string | undefined>;
}

/**
 * One paid price stream on a hijacked reply, written as Server-Sent Events. Per update: wait
 * until the socket holds nothing unflushed (changes coalesce meanwhile, newest wins) → charge
 * (durable) → write → a write that fails takes the charge back. A reader that takes nothing for
 * stallMs is cut off (its write in flight fails and is taken back). When the cover is used up it
 * sends `payment-required` and waits (bounded) for a top-up; a reconnect's possibly undelivered
 * update is re-sent once, free, under its own id: exactly the update that charge delivered.
 */
export class PriceStream {
  readonly id = randomUUID();
  private readonly logger = new Logger(PriceStream.name);
  private readonly coalescer: UpdateCoalescer;
  private ending: EndReason | undefined;
  private topUpArrived: (() => void) | undefined;
  /** Top-ups taken so far: a wait for one that already came returns at once. */
  private topUps = 0;
  private lastEventAt = Date.now();
  private lastChargeAt = Date.now();
  /** Since when the socket has held unflushed data (undefined: it holds none). */
  private unflushedSince: number | undefined;
  private readonly writer: SocketWriter;
  private finished: Promise<void> | undefined;
  private charged: string;
  private cutOff: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    readonly sale: MeteredSale,
    private readonly request: StreamRequest,
    private readonly response: ServerResponse,
    private readonly deps: StreamDeps,
    /** A reconnect's charge that may not have reached the buyer: re-sent free under its id. */
    private readonly resend: Resend | undefined,
  ) {
    this.coalescer = new UpdateCoalescer({ minMoveBps: request.minMoveBps, maxHz: request.maxHz });
    this.writer = new SocketWriter(response);
    this.charged = sale.charged;
  }

  get payer(): string {
    return this.sale.payer;
  }

  /** Runs the stream to its end; resolves once the socket is closed. */
  run(): Promise<void> {
    this.finished ??= this.serve();
    return this.finished;
  }

  /** A top-up voucher for this stream: raises the cover (PaymentRequired thrown as a 402). */
  async topUp(header: string): Promise<{ streamId: string; charged: string; covered: string }> {
    const { charged, covered } = await this.sale.topUp(header);
    this.topUps += 1;
    this.topUpArrived?.();
    return { streamId: this.id, charged, covered };
  }

  /** Ends the stream with `reason` (announced in an `end` event when the socket still takes it). */
  end(reason: EndReason): void {
    this.ending ??= reason;
    this.coalescer.close();
    this.topUpArrived?.();
    // a reader that takes nothing (its socket full) would hold the stream open for ever: cut it
    // once it has had the time to take the `end` (a write it never took is taken back)
    if (this.closed) return;
    this.cutOff ??= setTimeout(() => {
      this.response.destroy();
    }, END_GRACE_MS);
    this.cutOff.unref();
  }

  private async serve(): Promise<void> {
    const { response, deps, sale } = this;
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    response.on('close', () => {
      this.end('client_gone');
    });
    const unsubscribe = deps.changes.subscribe(this.request.symbols, (change) => {
      this.coalescer.offer(change);
    });
    const ticker = setInterval(
      () => {
        this.tick();
      },
      Math.min(deps.settings.keepAliveMs, 1000),
    );
    try {
      await this.writer.write(
        event('open', {
          streamId: this.id,
          channelId: sale.accountId,
          payer: sale.payer,
          network: sale.network,
          unitPrice: sale.unitPrice,
          charged: sale.charged,
          covered: sale.covered,
          symbols: this.request.symbols,
        }),
      );
      // a reconnect's update it may have missed, as it was charged; free
      const { resend } = this;
      if (
        resend !== undefined &&
        (await this.writer.write(await this.priceEvent(resend.change, resend.id)))
      ) {
        this.lastEventAt = Date.now();
      }
      for (;;) {
        const change = await this.coalescer.next();
        if (change === undefined || this.ending !== undefined) break;
        if (!(await this.deliver(change))) break;
      }
    } catch (error) {
      this.logger.warn(`stream ${this.id}: ${remoteText(error)}`);
    } finally {
      clearInterval(ticker);
      unsubscribe();
      this.coalescer.close();
      sale.end();
      await this.close();
    }
  }

  /** Charges and writes one update; false when the stream is over. */
  private async deliver(due: PriceChange): Promise<boolean> {
    let change = due;
    const { sale } = this;
    // charged only once everything written before has left this process: a reader that stopped
    // reading is charged for what fits the kernel's buffers, not for an ever longer queue here
    if (this.writer.unflushed()) {
      if (!(await this.writer.flushed(() => this.ending !== undefined))) return false;
      change = this.coalescer.newest(change);
    }
    const topUpsBefore = this.topUps;
    const charge = await sale.charge({ label: change.symbol, content: keptChange(change) });
    switch (charge.kind) {
      case 'charged': {
        const text = await this.priceEvent(change, charge.cumulative).catch(
          async (error: unknown) => {
            await sale.takeBack(charge);
            throw error;
          },
        );
        if (!(await this.writer.write(text))) {
          await sale.takeBack(charge);
          return false;
        }
        this.charged = charge.cumulative;
        this.lastEventAt = Date.now();
        this.lastChargeAt = this.lastEventAt;
        this.coalescer.sent(change);
        return true;
      }
      case 'exhausted': {
        this.charged = charge.charged;
        const required = { ...charge.required, streamId: this.id };
        if (!(await this.writer.write(event('payment-required', required)))) return false;
        this.lastEventAt = Date.now();
        if (!(await this.waitForTopUp(topUpsBefore))) {
          this.ending ??= 'budget_exhausted';
          return false;
        }
        this.coalescer.offer(change);
        return true;
      }
      case 'refused':
        this.logger.warn(`stream ${this.id} on ${sale.accountId}: ${charge.reason}`);
        this.ending ??= 'channel_changed';
        return false;
    }
  }

  private async priceEvent(change: PriceChange, id: string): Promise<string> {
    const attestation = await this.deps.attest(change);
    return event(
      'price',
      {
        timestamp: new Date(change.timestamp).toISOString(),
        currency: 'USD',
        price: { [change.symbol]: change.price },
        venues: change.venues,
        spread: change.spread,
        ...(attestation === undefined ? {} : { attestation }),
      },
      id,
    );
  }

  /** Resolves true once a top-up came after `topUpsBefore` were counted (even before the wait). */
  private waitForTopUp(topUpsBefore: number): Promise<boolean> {
    return new Promise((resolve) => {
      if (this.topUps !== topUpsBefore) {
        resolve(this.ending === undefined);
        return;
      }
      const timer = setTimeout(() => {
        this.topUpArrived = undefined;
        resolve(false);
      }, this.deps.settings.topUpWaitMs);
      this.topUpArrived = () => {
        clearTimeout(timer);
        this.topUpArrived = undefined;
        resolve(this.ending === undefined);
      };
    });
  }

  /** Keep-alive comments, the idle ends, and the cut-off of a reader that takes nothing. */
  private tick(): void {
    const now = Date.now();
    const { settings } = this.deps;
    if (this.writer.unflushed()) {
      this.unflushedSince ??= now;
      if (now - this.unflushedSince >= settings.stallMs) this.cutStalled();
      return;
    }
    this.unflushedSince = undefined;
    const waitingForTopUp = this.topUpArrived !== undefined;
    if (
      now - this.lastEventAt >= settings.idleMs ||
      (!waitingForTopUp && now - this.lastChargeAt >= settings.unchargedMs)
    ) {
      this.end('idle');
    } else if (now - this.writer.lastWriteAt >= settings.keepAliveMs) {
      void this.writer.write(': keep-alive\n\n');
    }
  }

  /** The reader took nothing for stallMs: cut now (no `end` could reach it); the write in flight fails. */
  private cutStalled(): void {
    this.logger.log(
      `stream ${this.id}: the reader took nothing for ${this.deps.settings.stallMs} ms`,
    );
    this.ending ??= 'idle';
    this.coalescer.close();
    this.topUpArrived?.();
    this.response.destroy();
  }

  private async close(): Promise<void> {
    const reason = this.ending ?? 'client_gone';
    if (reason !== 'client_gone') {
      await this.writer.write(event('end', { reason, charged: this.charged }));
    }
    await new Promise<void>((resolve) => {
      const { response } = this;
      if (response.destroyed || response.writableFinished) {
        resolve();
        return;
      }
      // finished, or cut off (END_GRACE_MS): either way the socket is done with
      response.once('close', resolve);
      if (!response.writableEnded) response.end();
    });
    this.closed = true;
    clearTimeout(this.cutOff);
  }
}

/** One SSE event: `event:`, optional `id:`, one `data:` line of JSON. */
function event(name: string, data: unknown, id?: string): string {
  return `event: ${name}\n${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`;
}
