import { SNAPSHOT_STORE, type SnapshotStore } from '../src/aggregation/snapshot-store.js';
import { MarketStatsService } from '../src/market-stats/market-stats.service.js';
import { statsVenue } from '../src/market-stats/stats-venues.js';
import { expectRelativelyClose } from './support/expected-prices.js';
import { FakeMarkets } from './support/fake-markets.js';
import { expectedFigures } from './support/recorded-stats.js';
import { startApp, type RunningApp } from './support/test-app.js';

const HONEST = ['coinbase', 'kraken', 'bitstamp', 'binance'] as const;

describe("market statistics when venues hang, fail or lie: the honest venues' figures", () => {
  let markets: FakeMarkets;
  let service: RunningApp;

  beforeAll(async () => {
    markets = await FakeMarkets.start({
      venues: [...HONEST, 'okx', 'bybit', 'kucoin'],
      // OKX's statistics come with its prices: every last price ten times too high
      scale: { okx: 10 },
      faults: {
        bybit: { kind: 'hang' },
        kucoin: { kind: 'raw', status: 500, body: 'internal error' },
      },
    });
    service = await startApp({ ...markets.env(), MARKET_TIMEOUT_MS: '300' });
    await service.refresh();
    await service.app.get(MarketStatsService).refresh();
  }, 60_000);

  afterAll(async () => {
    await service.close();
    await markets.close();
  });

  it.each(['BTC', 'ETH'])(
    '%s: the liar, the hanging and the failing venue move nothing',
    async (symbol) => {
      const snapshot = (await service.app.get<SnapshotStore>(SNAPSHOT_STORE).current())!;
      const price = snapshot.prices.get(symbol)!.price;
      const rates = {
        USDT: snapshot.prices.get('USDT')!.price,
        USDC: snapshot.prices.get('USDC')!.price,
      };
      const served = service.app.get(MarketStatsService).statisticsOf(symbol, price, snapshot);
      const expected = expectedFigures(symbol, rates, HONEST);
      expect(served.venues).toBe(HONEST.length);
      for (const figure of ['open24h', 'high24h', 'low24h', 'volume24h', 'volumeUsd24h'] as const) {
        expectRelativelyClose(served[figure]!, expected[figure], 1e-9);
      }
      // CoinGecko is not enabled: no market cap, and none estimated
      expect(served.marketCapUsd).toBeNull();
    },
  );
});

describe('market statistics before any venue has given them', () => {
  let markets: FakeMarkets;
  let service: RunningApp;

  beforeAll(async () => {
    // Binance reads its statistics on a request of its own: that one fails, its prices do not;
    // CoinGecko's market caps are read, but a market-cap source makes no 24-hour figure
    markets = await FakeMarkets.start({ venues: ['binance', 'coingecko'] });
    for (const { path } of statsVenue('binance')?.requests ?? []) {
      markets.venue('binance').on(path, { kind: 'raw', status: 500, body: 'internal error' });
    }
    service = await startApp({ ...markets.env(), PRICE_MIN_SOURCES: '1' });
    await service.refresh();
    await service.app.get(MarketStatsService).refresh();
  }, 60_000);

  afterAll(async () => {
    await service.close();
    await markets.close();
  });

  it('answers 503 with Retry-After before any 402, while the price itself is for sale', async () => {
    const capsPath = statsVenue('coingecko')?.requests[0]?.path ?? '';
    expect(markets.venue('coingecko').requests).toContain(capsPath);
    expect((await service.get('/v1/ticker/BTC')).status).toBe(402);
    const response = await service.get('/v1/markets/BTC,ETH');
    expect(response.status).toBe(503);
    expect(response.headers.get('payment-required')).toBeNull();
    expect(response.headers.get('retry-after')).toBe('30');
    expect(await response.json()).toMatchObject({
      code: 'price_unavailable',
      detail: 'No 24-hour statistics have been read from any venue yet.',
    });
  });
});
