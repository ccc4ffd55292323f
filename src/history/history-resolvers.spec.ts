import type { FastifyRequest } from 'fastify';
import type { AssetCatalogue } from '../assets/asset-catalogue.js';
import { ApiError } from '../common/api-error.js';
import type { Candle, Interval } from './candle.js';
import type { CandleQuery, CandleSet, HistoryCandles } from './history-candles.service.js';
import { OhlcResolver, PriceAtResolver } from './history-resolvers.js';

const MINUTE = 60_000;

/** Candles for the intervals given only, recording each query asked. */
class IntervalHistory {
  readonly asked: CandleQuery[] = [];
  constructor(private readonly serves: readonly Interval[]) {}

  candles(query: CandleQuery): Promise<CandleSet> {
    this.asked.push(query);
    if (!this.serves.includes(query.interval)) return Promise.resolve({ candles: [], failed: [] });
    const candle: Candle = {
      time: new Date(query.from).toISOString(),
      open: 100,
      high: 102,
      low: 98,
      close: 101,
      volume: 3,
      volumeUsd: 303,
      venues: ['a', 'b'],
      closed: true,
    };
    return Promise.resolve({ candles: [candle], failed: [] });
  }
}

const catalogue = { has: (symbol: string) => symbol === 'BTC' } as unknown as AssetCatalogue;

function request(symbol: string, query: Record<string, string>): FastifyRequest {
  return { params: { symbol }, query } as unknown as FastifyRequest;
}

function priceAt(history: IntervalHistory): PriceAtResolver {
  return new PriceAtResolver(catalogue, history as unknown as HistoryCandles, { timeoutMs: 50 });
}

describe('PriceAtResolver', () => {
  const t = Date.parse('2026-11-20T11:37:30Z');

  it('answers from the 1-minute candle containing t', async () => {
    const history = new IntervalHistory(['1m', '1h']);
    const answer = await priceAt(history).resolve(request('btc', { t: String(t / 1000) }));
    expect(answer.body).toEqual({
      timestamp: '2026-11-20T11:37:00.000Z',
      currency: 'USD',
      price: { BTC: 101 },
      t: '2026-11-20T11:37:30.000Z',
      resolution: '1m',
      band: { low: 98, high: 102 },
      venues: ['a', 'b'],
      closed: true,
    });
    expect(answer.attestedClaims()).toEqual({
      currency: 'USD',
      timestamp: t - 30_000,
      values: [{ symbol: 'BTC', value: 101, venues: 2, spread: 4 / 101 }],
    });
    expect(history.asked).toHaveLength(1);
  });

  it('where 1-minute history no longer reaches t, the finest interval that does, said in resolution', async () => {
    const history = new IntervalHistory(['1h', '1d']);
    const answer = await priceAt(history).resolve(request('BTC', { t: new Date(t).toISOString() }));
    expect(answer.body).toMatchObject({ resolution: '1h', timestamp: '2026-11-20T11:00:00.000Z' });
    expect(history.asked.map((query) => [query.interval, query.from === query.to])).toEqual([
      ['1m', true],
      ['5m', true],
      ['15m', true],
      ['1h', true],
    ]);
  });

  it('tries no further interval once its deadline has passed: a 503, not one time-out per interval', async () => {
    const history = new IntervalHistory(['1d']);
    const slow = {
      asked: history.asked,
      candles: async (asked: CandleQuery) => {
        await new Promise((resolve) => setTimeout(resolve, 60));
        return history.candles(asked);
      },
    };
    await expect(
      priceAt(slow as unknown as IntervalHistory).resolve(request('BTC', { t: String(t / 1000) })),
    ).rejects.toMatchObject({
      status: 503,
      code: 'price_unavailable',
    });
    expect(history.asked.map((asked) => asked.interval)).toEqual(['1m', '5m']);
  });

  it('refuses t no venue’s history reaches, and unknown symbols before asking anyone', async () => {
    await expect(
      priceAt(new IntervalHistory([])).resolve(request('BTC', { t: '1000' })),
    ).rejects.toMatchObject({
      status: 400,
      detail: 'No venue has BTC history reaching 1970-01-01T00:16:40.000Z.',
    });
    const history = new IntervalHistory(['1m']);
    await expect(priceAt(history).resolve(request('DOGE', { t: '1000' }))).rejects.toBeInstanceOf(
      ApiError,
    );
    await expect(priceAt(history).resolve(request('DOGE', { t: '1000' }))).rejects.toMatchObject({
      status: 404,
    });
    expect(history.asked).toEqual([]);
  });
});

describe('OhlcResolver', () => {
  it('refuses a range no venue has candles for with a 400', async () => {
    const resolver = new OhlcResolver(
      catalogue,
      new IntervalHistory([]) as unknown as HistoryCandles,
    );
    await expect(
      resolver.resolve(
        request('BTC', {
          interval: '1m',
          start: String(Math.floor((Date.now() - 10 * MINUTE) / 1000)),
        }),
      ),
    ).rejects.toMatchObject({
      status: 400,
      detail: expect.stringMatching(/^No venue has BTC 1m candles from /) as unknown,
    });
  });

  it('signs the digest of the candles it serves, valued at the last close', async () => {
    const resolver = new OhlcResolver(
      catalogue,
      new IntervalHistory(['1d']) as unknown as HistoryCandles,
    );
    const answer = await resolver.resolve(
      request('BTC', {
        interval: '1d',
        start: String(Math.floor((Date.now() - 86_400_000) / 1000)),
      }),
    );
    const claims = answer.attestedClaims();
    expect(claims.values).toEqual([
      { symbol: `BTC:1d:${answer.body.digest}`, value: 101, venues: 2, spread: 0 },
    ]);
    expect(answer.body.digest).toMatch(/^[0-9a-f]{64}$/);
  });
});
