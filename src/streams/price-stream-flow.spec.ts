import { EventEmitter } from 'node:events';
import type http from 'node:http';
import type { MeteredCharge } from '../payments/index.js';
import { PriceStream } from './price-stream.js';
import type { StreamsSettings } from './streams.settings.js';
import { PushedChanges, SETTINGS, fakeSale } from '../../test/support/stream-fakes.js';

/**
 * A response whose writes are taken at once, and whose queue (unflushed bytes, need for
 * 'drain') the test sets: a reader that stopped reading once the kernel buffer is full.
 */
class QueuedResponse extends EventEmitter {
  destroyed = false;
  writable = true;
  writableEnded = false;
  writableFinished = false;
  writableLength = 0;
  writableNeedDrain = false;
  readonly written: string[] = [];
  /** Writes not called back: the kernel took none of their bytes. */
  held: ((error?: Error | null) => void)[] | undefined;

  writeHead(): this {
    return this;
  }
  write(text: string, done: (error?: Error | null) => void): boolean {
    if (this.destroyed) {
      setImmediate(() => {
        done(new Error('destroyed'));
      });
      return false;
    }
    this.written.push(text);
    if (this.held !== undefined) {
      this.held.push(done);
      return false;
    }
    setImmediate(() => {
      done();
    });
    return !this.writableNeedDrain;
  }
  end(): void {
    this.writableEnded = true;
    this.writableFinished = true;
    setImmediate(() => this.emit('close'));
  }
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const done of this.held?.splice(0) ?? []) done(new Error('destroyed'));
    this.emit('close');
  }
  /** The reader stops reading: bytes stay queued in this process. */
  backlog(): void {
    this.writableLength = 300;
    this.writableNeedDrain = true;
  }
  /** The reader took everything. */
  drain(): void {
    this.writableLength = 0;
    this.writableNeedDrain = false;
    this.emit('drain');
  }
  prices(): string[] {
    return this.written.filter((text) => text.startsWith('event: price'));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `condition` holds (at most 5 s): a loaded machine is slow, never wrong. */
async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 5_000) throw new Error(`not reached within 5 s: ${condition.toString()}`);
    await sleep(10);
  }
}

function start(
  sale: ReturnType<typeof fakeSale>,
  settings: StreamsSettings = SETTINGS,
): {
  stream: PriceStream;
  response: QueuedResponse;
  changes: PushedChanges;
  running: Promise<void>;
} {
  const changes = new PushedChanges();
  const response = new QueuedResponse();
  const stream = new PriceStream(
    sale,
    { symbols: ['BTC'], minMoveBps: 0, maxHz: 10 },
    response as unknown as http.ServerResponse,
    { changes, settings, attest: () => Promise.resolve(undefined) },
    undefined,
  );
  return { stream, response, changes, running: stream.run() };
}

describe('PriceStream, write path', () => {
  it('charges nothing while the socket holds unflushed data, then the newest change once drained', async () => {
    const sale = fakeSale(10);
    const { stream, response, changes, running } = start(sale);
    await sleep(50);
    changes.push(100);
    await until(() => sale.chargedTotal() === 1);
    response.backlog();
    for (const price of [101, 102, 103]) {
      changes.push(price);
      await sleep(120);
    }
    expect(sale.chargedTotal()).toBe(1);
    expect(response.prices()).toHaveLength(1);
    response.drain();
    await until(() => sale.chargedTotal() === 2);
    expect(response.prices()).toHaveLength(2);
    expect(response.prices()[1]).toContain('"BTC":103');
    stream.end('shutdown');
    await running;
  });

  it('cuts off a reader that takes nothing for STREAM_STALL_MS, charging nothing more', async () => {
    const sale = fakeSale(10);
    const { response, changes, running } = start(sale, { ...SETTINGS, stallMs: 400 });
    await sleep(50);
    response.backlog();
    changes.push(100);
    await until(() => response.destroyed);
    await running;
    expect(sale.chargedTotal()).toBe(0);
  });

  it('takes back the update whose write the stalled reader never took, once cut off', async () => {
    const sale = fakeSale(10);
    const { response, changes, running } = start(sale, { ...SETTINGS, stallMs: 400 });
    await sleep(50);
    response.held = [];
    changes.push(100);
    await until(() => sale.chargedTotal() === 1);
    await running;
    expect(response.destroyed).toBe(true);
    expect(sale.takenBack).toEqual(['100']);
    expect(sale.chargedTotal()).toBe(0);
  }, 10_000);

  it('ends a stream that charged nothing for STREAM_UNCHARGED_MS with `end` idle', async () => {
    const sale = fakeSale(10);
    const { response, running } = start(sale, { ...SETTINGS, unchargedMs: 400 });
    const started = Date.now();
    await running;
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(response.written.at(-1)).toBe(
      `event: end\ndata: ${JSON.stringify({ reason: 'idle', charged: '0' })}\n\n`,
    );
  }, 10_000);

  it('wakes on a top-up that lands between `exhausted` and the wait for it', async () => {
    const sale = fakeSale(1);
    const charge = sale.charge.bind(sale);
    const opened: { stream?: PriceStream } = {};
    let toppedUp = false;
    // the top-up arrives while `payment-required` is being written, before the stream waits
    sale.charge = async (item): Promise<MeteredCharge> => {
      const result = await charge(item);
      if (result.kind === 'exhausted' && !toppedUp) {
        toppedUp = true;
        setImmediate(() => {
          void opened.stream!.topUp('header');
        });
      }
      return result;
    };
    const started = start(sale, { ...SETTINGS, topUpWaitMs: 10_000 });
    opened.stream = started.stream;
    await sleep(50);
    // each change waits for the one before it to be written: none is coalesced away
    for (const [index, price] of [100, 101, 102].entries()) {
      started.changes.push(price);
      await until(() => started.response.prices().length === index + 1);
    }
    expect(toppedUp).toBe(true);
    // 100 charged, 101 exhausted the cover; the top-up's 2 units carry 101 (offered again) and 102
    expect(started.response.prices().map((text) => /^id: (\d+)$/m.exec(text)?.[1])).toEqual([
      '100',
      '200',
      '300',
    ]);
    expect(
      started.response.written.filter((text) => text.startsWith('event: payment-required')),
    ).toHaveLength(1);
    started.stream.end('shutdown');
    await started.running;
  });
});
