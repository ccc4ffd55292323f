import { Logger } from '@nestjs/common';
import type { PriceRefreshService } from '../aggregation/price-refresh.service.js';
import type { PricingSettings } from '../aggregation/pricing.settings.js';
import type { PriceSnapshot } from '../aggregation/price-snapshot.js';
import type { MarketsSettings } from '../markets/markets.settings.js';
import { FakeVenue } from '../../test/support/fake-venue.js';
import { MarketStatsService } from './market-stats.service.js';

const PRICING: PricingSettings = {
  refreshMs: 1000,
  staleMs: 60_000,
  minSources: 2,
  maxDeviation: 0.02,
  outlierFloor: 0.005,
  madMultiplier: 5,
  volumeWeighted: false,
};
const STALE_MS = 3000;
const SNAPSHOT: PriceSnapshot = { asOf: 0, prices: new Map() };

/** Bitstamp's ticker shape: one BTC/USD row with these figures, observed `ageMs` ago. */
function bitstampBody(high: number, ageMs = 0): unknown {
  const timestamp = String(Math.floor((Date.now() - ageMs) / 1000));
  return [
    {
      pair: 'BTC/USD',
      last: '100',
      open_24: '104',
      high: String(high),
      low: '98',
      volume: '5',
      vwap: '101',
      timestamp,
    },
  ];
}

describe('MarketStatsService', () => {
  let venues: { bitstamp: FakeVenue; okx: FakeVenue };
  let service: MarketStatsService;
  let bitstamp: () => unknown;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    venues = {
      bitstamp: await FakeVenue.start({
        '/api/v2/ticker/': { kind: 'json', body: () => bitstamp() },
      }),
      okx: await FakeVenue.start({
        '/api/v5/market/tickers?instType=SPOT': {
          kind: 'json',
          body: () => ({
            code: '0',
            data: [
              {
                instId: 'BTC-USD',
                last: '100.1',
                high24h: '106',
                low24h: '98.2',
                open24h: '104.2',
                ts: String(Date.now()),
              },
            ],
          }),
        },
      }),
    };
    const markets = {
      enabled: ['bitstamp', 'okx'],
      baseUrls: { bitstamp: venues.bitstamp.url, okx: venues.okx.url },
      timeoutMs: 1000,
      apiKeys: {},
    } as unknown as MarketsSettings;
    const prices = { polling: true } as PriceRefreshService;
    service = new MarketStatsService(
      markets,
      { refreshMs: 60_000, staleMs: STALE_MS },
      PRICING,
      prices,
      null,
    );
  });

  afterAll(async () => {
    service.onApplicationShutdown();
    await venues.bitstamp.close();
    await venues.okx.close();
  });

  it('has nothing gathered before a reading, then makes the figures again for each new one', async () => {
    bitstamp = () => bitstampBody(107);
    expect(service.gathered()).toBe(false);
    await service.refresh();
    expect(service.gathered()).toBe(true);
    expect(service.statisticsOf('BTC', 100, SNAPSHOT)).toMatchObject({ venues: 2, high24h: 106.5 });

    bitstamp = () => bitstampBody(108);
    expect(service.statisticsOf('BTC', 100, SNAPSHOT).high24h).toBe(106.5);
    await service.refresh();
    expect(service.statisticsOf('BTC', 100, SNAPSHOT).high24h).toBe(107);
  });

  it('drops a reading from the figures once it goes stale, without a new reading', async () => {
    bitstamp = () => bitstampBody(108, STALE_MS - 1500);
    await service.refresh();
    expect(service.statisticsOf('BTC', 100, SNAPSHOT).venues).toBe(2);
    // bitstamp's timestamps are whole seconds: wait past its staleness with a margin
    await new Promise((resolve) => setTimeout(resolve, 2100));
    expect(service.statisticsOf('BTC', 100, SNAPSHOT)).toMatchObject({ venues: 0, high24h: null });
  });
});
