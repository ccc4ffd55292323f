import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PriceChange } from '../aggregation/price-changes.js';
import type { MeteredSale } from '../payments/index.js';
import { changeOfKept, keptChange, PriceStream, type Resend } from './price-stream.js';
import { SseClient } from '../../test/support/sse-client.js';
import { PushedChanges, SETTINGS, fakeSale } from '../../test/support/stream-fakes.js';

describe('PriceStream', () => {
  let server: http.Server;
  let url: string;
  let next: (response: http.ServerResponse) => void = () => undefined;

  beforeAll(async () => {
    server = http.createServer((_request, response) => {
      next(response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  async function open(sale: MeteredSale, settings = SETTINGS, resend?: Resend) {
    const changes = new PushedChanges();
    let stream: PriceStream | undefined;
    next = (response) => {
      stream = new PriceStream(
        sale,
        { symbols: ['BTC'], minMoveBps: 0, maxHz: 10 },
        response,
        { changes, settings, attest: () => Promise.resolve('signed') },
        resend,
      );
      void stream.run();
    };
    const client = await SseClient.open(url);
    await client.until((events) => events.length > 0);
    return { client, changes, stream: stream! };
  }

  async function pushUntil(changes: PushedChanges, client: SseClient, count: number) {
    for (let price = 100; client.events.length < count; price += 1) {
      changes.push(price);
      await new Promise((resolve) => setTimeout(resolve, 120));
    }
  }

  it('charges each update before writing it, asks for more when the cover is used, ends after the wait', async () => {
    const sale = fakeSale(2);
    const { client, changes } = await open(sale);
    await pushUntil(changes, client, 4);
    await client.untilEnded();
    expect(client.events.map((event) => [event.event, event.id])).toEqual([
      ['open', undefined],
      ['price', '100'],
      ['price', '200'],
      ['payment-required', undefined],
      ['end', undefined],
    ]);
    expect(client.events[2]!.data).toMatchObject({
      price: { BTC: expect.any(Number) as number },
      attestation: 'signed',
    });
    expect(client.events[4]!.data).toEqual({ reason: 'budget_exhausted', charged: '200' });
    expect(sale.chargedTotal()).toBe(2);
  });

  it('goes on after a top-up', async () => {
    const sale = fakeSale(1);
    const { client, changes, stream } = await open(sale, { ...SETTINGS, topUpWaitMs: 5000 });
    await pushUntil(changes, client, 3);
    expect(client.events.at(-1)!.event).toBe('payment-required');
    expect(await stream.topUp('header')).toMatchObject({ streamId: stream.id, covered: '300' });
    await pushUntil(changes, client, 5);
    expect(client.named('price').map((event) => event.id)).toEqual(['100', '200', '300']);
    stream.end('shutdown');
    await client.untilEnded();
    expect(client.events.at(-1)!.data).toEqual({ reason: 'shutdown', charged: '300' });
  });

  it('re-sends a reconnect’s undelivered update at once, exactly as it was charged, free', async () => {
    const sale = fakeSale(5);
    const changes = new PushedChanges();
    const now = Date.now();
    // the current prices moved on since: the re-send is the charged update, not one of these
    for (const [symbol, price] of [
      ['BTC', 42],
      ['ETH', 7],
    ] as const) {
      changes.known.set(symbol, {
        symbol,
        price,
        timestamp: now,
        venues: 3,
        spread: 0,
        oldestInputAt: now,
      });
    }
    const charged: PriceChange = {
      symbol: 'ETH',
      price: 6.5,
      timestamp: now - 60_000,
      venues: 2,
      spread: 0.004,
      oldestInputAt: now - 61_000,
    };
    const attested: PriceChange[] = [];
    let stream: PriceStream | undefined;
    next = (response) => {
      stream = new PriceStream(
        sale,
        { symbols: ['BTC', 'ETH'], minMoveBps: 0, maxHz: 10 },
        response,
        {
          changes,
          settings: SETTINGS,
          attest: (change) => {
            attested.push(change);
            return Promise.resolve('signed');
          },
        },
        { id: '700', change: changeOfKept(keptChange(charged))! },
      );
      void stream.run();
    };
    const client = await SseClient.open(url);
    await client.until((events) => events.length >= 2);
    expect(client.events[1]).toEqual({
      event: 'price',
      id: '700',
      data: {
        timestamp: new Date(now - 60_000).toISOString(),
        currency: 'USD',
        price: { ETH: 6.5 },
        venues: 2,
        spread: 0.004,
        attestation: 'signed',
      },
    });
    // the attestation signs the charged update's inputs, its oldest input's time among them
    expect(attested).toEqual([charged]);
    expect(sale.chargedTotal()).toBe(0);
    stream!.end('shutdown');
  });

  it('re-sends a reconnect’s undelivered update free, under its id, then charges the next', async () => {
    const sale = fakeSale(5);
    const kept = {
      symbol: 'BTC',
      price: 99,
      timestamp: 1,
      venues: 3,
      spread: null,
      oldestInputAt: 1,
    };
    const { client, changes, stream } = await open(sale, SETTINGS, { id: '700', change: kept });
    await pushUntil(changes, client, 3);
    expect(client.named('price').map((event) => event.id)).toEqual(['700', '100']);
    expect(client.named('price')[0]!.data).toMatchObject({ price: { BTC: 99 } });
    expect(sale.chargedTotal()).toBe(1);
    stream.end('shutdown');
  });

  it('keeps what an update was charged for, and reads back only what it kept', () => {
    const change = {
      symbol: 'SOL',
      price: 1.5,
      timestamp: 2,
      venues: 4,
      spread: 0,
      oldestInputAt: 1,
    };
    expect(changeOfKept(keptChange(change))).toEqual(change);
    expect(changeOfKept('not json')).toBeUndefined();
    expect(changeOfKept(JSON.stringify({ ...change, price: '1.5' }))).toBeUndefined();
  });

  it('charges nothing after the client left', async () => {
    const sale = fakeSale(10);
    const { client, changes, stream } = await open(sale);
    await pushUntil(changes, client, 2);
    client.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (let price = 500; price < 505; price += 1) {
      changes.push(price);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await stream.run();
    expect(sale.chargedTotal()).toBe(client.named('price').length);
  });

  it('takes the charge back when the update cannot be written, and stops', async () => {
    const sale = fakeSale(10);
    const changes = new PushedChanges();
    const written: string[] = [];
    let closed: (() => void) | undefined;
    // a socket that takes the `open` and the first update, then fails every write
    const response = {
      destroyed: false,
      writable: true,
      writableEnded: false,
      writeHead: () => response,
      on: () => response,
      write: (text: string, done: (error?: Error | null) => void) => {
        if (written.length < 2) {
          written.push(text);
          setImmediate(() => {
            done();
          });
        } else {
          setImmediate(() => {
            done(new Error('EPIPE'));
          });
        }
        return true;
      },
      once: (_event: string, done: () => void) => {
        closed = done;
        return response;
      },
      end: () => {
        response.writableEnded = true;
        closed?.();
      },
    };
    const stream = new PriceStream(
      sale,
      { symbols: ['BTC'], minMoveBps: 0, maxHz: 10 },
      response as unknown as http.ServerResponse,
      { changes, settings: SETTINGS, attest: () => Promise.resolve(undefined) },
      undefined,
    );
    const running = stream.run();
    for (let price = 100; price < 104; price += 1) {
      changes.push(price);
      await new Promise((resolve) => setTimeout(resolve, 120));
    }
    stream.end('shutdown');
    await running;
    expect(written).toHaveLength(2);
    expect(sale.takenBack).toEqual(['200']);
    expect(sale.chargedTotal()).toBe(1);
  });

  it('cuts off a reader that takes nothing once the stream ends, taking back the update it never took', async () => {
    const sale = fakeSale(10);
    const changes = new PushedChanges();
    const pending: ((error?: Error | null) => void)[] = [];
    let closed: (() => void) | undefined;
    let writes = 0;
    // the `open` goes out, then the reader's socket is full: no write completes
    const response = {
      destroyed: false,
      writable: true,
      writableEnded: false,
      writableFinished: false,
      writeHead: () => response,
      on: () => response,
      once: (_event: string, done: () => void) => {
        closed = done;
        return response;
      },
      write: (_text: string, done: (error?: Error | null) => void) => {
        writes += 1;
        if (writes === 1)
          setImmediate(() => {
            done();
          });
        else pending.push(done);
        return false;
      },
      end: () => {
        response.writableEnded = true;
      },
      destroy: () => {
        response.destroyed = true;
        for (const done of pending.splice(0)) done(new Error('destroyed'));
        closed?.();
      },
    };
    const stream = new PriceStream(
      sale,
      { symbols: ['BTC'], minMoveBps: 0, maxHz: 10 },
      response as unknown as http.ServerResponse,
      { changes, settings: SETTINGS, attest: () => Promise.resolve(undefined) },
      undefined,
    );
    const running = stream.run();
    await new Promise((resolve) => setTimeout(resolve, 50));
    changes.push(100);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sale.chargedTotal()).toBe(1);
    stream.end('shutdown');
    await running;
    expect(response.destroyed).toBe(true);
    expect(sale.takenBack).toEqual(['100']);
    expect(sale.chargedTotal()).toBe(0);
  }, 10_000);

  it('sends keep-alive comments and ends an idle stream', async () => {
    const sale = fakeSale(10);
    const { client } = await open(sale, { ...SETTINGS, idleMs: 500 });
    await client.untilEnded(5000);
    expect(client.comments).toBeGreaterThanOrEqual(2);
    expect(client.events.at(-1)).toMatchObject({
      event: 'end',
      data: { reason: 'idle', charged: '0' },
    });
  });
});
