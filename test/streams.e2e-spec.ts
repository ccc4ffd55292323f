import { SNAPSHOT_STORE, type SnapshotStore } from '../src/aggregation/snapshot-store.js';
import { FakeMarkets, type ReplayedVenue } from './support/fake-markets.js';
import { FakeStreams, STREAMING_VENUES, type StreamingVenue } from './support/fake-streams.js';
import { OpenApiContract } from './support/openapi-contract.js';
import { startApp, type RunningApp } from './support/test-app.js';

const contract = new OpenApiContract();
const QUIET_MS = 1000;

interface SourceState {
  id: string;
  status: string;
  transport: 'rest' | 'stream';
  stream: {
    state: string;
    connections: number;
    lastMessageAt: string | null;
    lastError: { message: string } | null;
  } | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, condition: () => Promise<boolean>, timeoutMs = 6000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(50);
  }
}

describe('ticker streams, with REST as the fallback', () => {
  let markets: FakeMarkets;
  let streams: FakeStreams;
  let service: RunningApp;

  async function start(venues?: readonly ReplayedVenue[]): Promise<void> {
    markets = await FakeMarkets.start(venues === undefined ? {} : { venues });
    streams = await FakeStreams.start(
      STREAMING_VENUES.filter((id) => venues?.includes(id) ?? true),
    );
    service = await startApp({
      ...markets.env(),
      ...streams.env(),
      PRICE_REFRESH_MS: '1000',
      PRICE_STALE_MS: '5000',
      MARKET_STREAM_QUIET_MS: String(QUIET_MS),
    });
    await until('a first aggregation', async () => {
      const body = (await (await service.get('/v1/sources')).json()) as { aggregatedAt: unknown };
      return body.aggregatedAt !== null;
    });
  }

  afterEach(async () => {
    await service.close();
    await streams.close();
    await markets.close();
  });

  async function sources(): Promise<Map<string, SourceState>> {
    const response = await service.get('/v1/sources');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { sources: SourceState[] };
    contract.assertResponse('getSources', 200, 'application/json', body);
    return new Map(body.sources.map((source) => [source.id, source]));
  }

  async function source(id: string): Promise<SourceState> {
    return (await sources()).get(id)!;
  }

  const allLive = async () =>
    [...(await sources()).values()]
      .filter((state) => (STREAMING_VENUES as string[]).includes(state.id))
      .every((state) => state.transport === 'stream' && state.stream?.state === 'live');

  async function btc(): Promise<{ price: number; age: number } | undefined> {
    const price = (await service.app.get<SnapshotStore>(SNAPSHOT_STORE).current())?.prices.get(
      'BTC',
    );
    return price === undefined
      ? undefined
      : { price: price.price, age: Date.now() - price.observedAt };
  }

  it('subscribes each stream to the catalogue instruments its venue lists, and pauses REST while live', async () => {
    await start();
    await until('every stream live', allLive);
    const states = await sources();
    for (const id of STREAMING_VENUES) {
      expect(states.get(id)).toMatchObject({ status: 'ok', transport: 'stream' });
      expect(states.get(id)?.stream).toMatchObject({ state: 'live', connections: 1 });
    }
    for (const id of ['bitstamp', 'gemini', 'kucoin', 'coingecko']) {
      expect(states.get(id)).toMatchObject({ transport: 'rest', stream: null });
    }
    const sent = (id: StreamingVenue) => streams.stream(id).connections[0]!.join('\n');
    expect(sent('coinbase')).toContain('"BTC-USD"');
    expect(sent('coinbase')).toContain('"heartbeats"');
    expect(sent('kraken')).toContain('"BTC/USD"');
    expect(sent('okx')).toContain('"BNB-USDT"');
    expect(sent('bybit')).toContain('"tickers.BNBUSDT"');
    expect(sent('okx')).not.toContain('NOTACOIN');

    const polled = (id: ReplayedVenue) => markets.venue(id).requests.length;
    const before = Object.fromEntries([...markets.venues.keys()].map((id) => [id, polled(id)]));
    await sleep(2500);
    for (const id of STREAMING_VENUES) expect(polled(id)).toBe(before[id]);
    expect(polled('bitstamp')).toBeGreaterThan(before.bitstamp!);
    expect((await btc())?.age).toBeLessThan(1000);
  });

  it('serves a streamed price move within a second', async () => {
    await start(STREAMING_VENUES);
    await until('every stream live', allLive);
    await until('BTC priced', async () => (await btc()) !== undefined);
    const before = (await btc())!.price;
    const movedAt = Date.now();
    for (const id of STREAMING_VENUES) streams.stream(id).factor = 1.01;
    await until(
      'the move served',
      async () => Math.abs((await btc())!.price / before - 1.01) < 0.002,
      2000,
    );
    expect(Date.now() - movedAt).toBeLessThan(1000);
  });

  it('reconnects a dropped stream and subscribes again, polling REST meanwhile', async () => {
    await start();
    await until('every stream live', allLive);
    const okx = streams.stream('okx');
    const polled = markets.venue('okx').requests.length;
    okx.drop();
    await until('okx back on REST', async () => (await source('okx')).transport === 'rest', 2000);
    await until('okx polled again', () =>
      Promise.resolve(markets.venue('okx').requests.length > polled),
    );
    await until('okx live again', async () => (await source('okx')).stream?.state === 'live');
    expect(okx.connections).toHaveLength(2);
    expect(okx.connections[1]!.join('\n')).toContain('"BTC-USDT"');
    expect(await source('okx')).toMatchObject({ transport: 'stream', stream: { connections: 2 } });
  });

  it.each<['silent' | 'garbage', string]>([
    ['silent', `no readable message for ${QUIET_MS} ms`],
    ['garbage', 'not JSON'],
  ])(
    'a %s stream counts as stale: REST takes over, and the price stays fresh and right',
    async (fault, error) => {
      await start();
      await until('every stream live', allLive);
      const reference = (await btc())!.price;
      streams.stream('coinbase').misbehave(fault);
      await until(
        'coinbase back on REST',
        async () => (await source('coinbase')).transport === 'rest',
        3 * QUIET_MS,
      );
      const polled = markets.venue('coinbase').requests.length;
      await sleep(2500);
      expect(markets.venue('coinbase').requests.length).toBeGreaterThanOrEqual(polled + 2);
      const coinbase = await source('coinbase');
      expect(coinbase.status).toBe('ok');
      expect(coinbase.stream?.state).not.toBe('live');
      expect(coinbase.stream?.lastError?.message).toContain(error);
      // the garbage starts with control characters: shown as one printable line
      // eslint-disable-next-line no-control-regex
      expect(coinbase.stream?.lastError?.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
      const now = await btc();
      expect(now?.age).toBeLessThan(2000);
      expect(Math.abs(now!.price / reference - 1)).toBeLessThan(0.001);
    },
  );

  it('backs off from a stream that closes every connection, and REST keeps the venue priced', async () => {
    await start();
    await until('every stream live', allLive);
    const bybit = streams.stream('bybit');
    bybit.misbehave('storm');
    await sleep(4500);
    // back-off 1 s, 2 s, 4 s: at most three reconnections in 4.5 s, not hundreds
    expect(bybit.connections.length).toBeLessThanOrEqual(4);
    expect(bybit.connections.length).toBeGreaterThanOrEqual(2);
    const state = await source('bybit');
    expect(state).toMatchObject({ status: 'ok', transport: 'rest' });
    expect(['down', 'connecting']).toContain(state.stream?.state);
    expect((await btc())?.age).toBeLessThan(2000);
  });
});
