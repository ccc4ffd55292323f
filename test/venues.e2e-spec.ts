import { venueRequests } from '../src/markets/venue-definition.js';
import { builtInVenue } from '../src/markets/venues.js';
import { FakeMarkets, REPLAYED_VENUES } from './support/fake-markets.js';
import { startApp, type RunningApp } from './support/test-app.js';

interface SourceState {
  id: string;
  status: string;
  instruments: number;
  contributedTo: string[];
  lastError: { kind: string; message: string } | null;
  nextPollAt: string;
}

async function sourceStates(service: RunningApp): Promise<Map<string, SourceState>> {
  const response = await service.get('/v1/sources');
  expect(response.status).toBe(200);
  const body = (await response.json()) as { sources: SourceState[] };
  return new Map(body.sources.map((source) => [source.id, source]));
}

describe('every built-in venue, replayed on loopback', () => {
  let markets: FakeMarkets | undefined;
  let service: RunningApp | undefined;

  async function start(faults: Parameters<typeof FakeMarkets.start>[0] = {}): Promise<RunningApp> {
    markets = await FakeMarkets.start(faults);
    // no case here is about time-outs: room for the big recorded bodies on a busy machine
    service = await startApp({ ...markets.env(), MARKET_TIMEOUT_MS: '5000' });
    await service.refresh();
    return service;
  }

  afterEach(async () => {
    await service?.close();
    await markets?.close();
    service = undefined;
    markets = undefined;
  });

  it('asks each venue on its real path and query, and each one helps price BTC', async () => {
    const states = await sourceStates(await start());

    expect([...states.keys()]).toEqual(REPLAYED_VENUES);
    for (const id of REPLAYED_VENUES) {
      expect(markets?.venue(id).requests).toEqual(
        expect.arrayContaining(venueRequests(builtInVenue(id)).map((request) => request.path)),
      );
      expect(states.get(id)).toMatchObject({ status: 'ok', lastError: null });
      expect(states.get(id)?.instruments).toBeGreaterThan(0);
      expect(states.get(id)?.contributedTo).toContain('BTC');
    }
  });

  it('counts an error reported with HTTP 200 as a failure of that venue', async () => {
    const ok200 = (body: unknown) =>
      ({
        kind: 'raw',
        status: 200,
        body: JSON.stringify(body),
        contentType: 'application/json',
      }) as const;
    const states = await sourceStates(
      await start({
        faults: {
          okx: ok200({ code: '50011', msg: 'Too Many Requests', data: [] }),
          bybit: ok200({ retCode: 10006, retMsg: 'Too many visits!', result: {} }),
          kucoin: ok200({ code: '400100', msg: 'Service unavailable' }),
        },
      }),
    );

    expect(states.get('okx')?.lastError).toMatchObject({
      kind: 'venue_error',
      message: 'OKX error 50011: Too Many Requests',
    });
    expect(states.get('bybit')?.lastError).toMatchObject({
      kind: 'venue_error',
      message: 'Bybit error 10006: Too many visits!',
    });
    expect(states.get('kucoin')?.lastError).toMatchObject({
      kind: 'venue_error',
      message: 'KuCoin error 400100: Service unavailable',
    });
    for (const id of ['okx', 'bybit', 'kucoin']) expect(states.get(id)?.status).toBe('failing');
    expect(states.get('binance')?.status).toBe('ok');
  });

  it.each([
    ['binance', 418],
    ['bybit', 403],
    ['coingecko', 429],
  ] as const)(
    'treats %s answering %d as a rate limit and waits its Retry-After',
    async (id, status) => {
      const before = Date.now();
      const states = await sourceStates(
        await start({
          faults: {
            [id]: { kind: 'raw', status, body: 'banned', headers: { 'retry-after': '120' } },
          },
        }),
      );

      expect(states.get(id)).toMatchObject({
        status: 'rate_limited',
        lastError: { kind: 'rate_limited', message: `HTTP ${status}` },
      });
      expect(Date.parse(states.get(id)!.nextPollAt)).toBeGreaterThanOrEqual(before + 120_000);
    },
  );

  it('sends URL credentials as Basic authorization and never shows them', async () => {
    markets = await FakeMarkets.start();
    const kraken = new URL(markets.env().MARKET_KRAKEN_URL ?? '');
    kraken.username = 'alice';
    kraken.password = 's3cr3t';
    service = await startApp({ ...markets.env(), MARKET_KRAKEN_URL: kraken.toString() });
    await service.refresh();

    const states = await sourceStates(service);
    expect(states.get('kraken')).toMatchObject({ status: 'ok', lastError: null });
    expect(markets.venue('kraken').authorizations).toContain(
      `Basic ${Buffer.from('alice:s3cr3t').toString('base64')}`,
    );
    expect(markets.venue('binance').authorizations).not.toContainEqual(expect.anything());
    expect(JSON.stringify(Object.fromEntries(states))).not.toContain('s3cr3t');
  });

  it('shows venue error text on one printable line, capped, without escape sequences', async () => {
    const hostile =
      'Service unavailable\n2026-11-23 [Nest] 1  - LOG [Payments] settled 0xforged\u001b[31m red' +
      '\r\n'.repeat(3) +
      'x'.repeat(5000);
    const states = await sourceStates(
      await start({
        faults: {
          okx: {
            kind: 'raw',
            status: 200,
            body: JSON.stringify({ code: '50011', msg: hostile, data: [] }),
            contentType: 'application/json',
          },
        },
      }),
    );
    const message = states.get('okx')?.lastError?.message ?? '';
    expect(message).toMatch(
      /^OKX error 50011: Service unavailable 2026-11-23 \[Nest\] 1 - LOG \[Payments\] settled 0xforged red x+…$/,
    );
    expect(message).toHaveLength(200);
  });
});
