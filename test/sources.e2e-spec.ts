import { DEFAULT_CATALOGUE } from '../src/assets/default-catalogue.js';
import { FakeMarkets } from './support/fake-markets.js';
import type { VenueBehaviour } from './support/fake-venue.js';
import { fixtureCopy } from './support/fixtures.js';
import {
  expectRelativelyClose,
  expectServedPrice,
  recordedUsdPrices,
} from './support/expected-prices.js';
import { OpenApiContract } from './support/openapi-contract.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { pricingVenuesBySymbol, recordedQuotes } from './support/recorded-quotes.js';
import { startApp, type RunningApp } from './support/test-app.js';

const contract = new OpenApiContract();

interface SourcesBody {
  timestamp: string;
  aggregatedAt: string | null;
  poller: { instance: string | null; thisInstance: boolean };
  notice: string | null;
  rates: { USDT: number | null; USDC: number | null };
  sources: {
    id: string;
    status: string;
    consecutiveFailures: number;
    lastError: { kind: string; message: string } | null;
    nextPollAt: string | null;
    instruments: number;
    contributedTo: string[];
    rejectedFor: string[];
  }[];
}

async function sourcesOf(stack: PaidApp | RunningApp): Promise<SourcesBody> {
  const service = 'service' in stack ? stack.service : stack;
  const response = await service.get('/v1/sources');
  expect(response.status).toBe(200);
  const body = (await response.json()) as SourcesBody;
  contract.assertResponse('getSources', 200, 'application/json', body);
  return body;
}

async function allPrices(stack: PaidApp): Promise<Record<string, number>> {
  const response = await stack.buyer.fetchV2(`${stack.service.url}/v1/all-tickers`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { prices: Record<string, number> }).prices;
}

const HONEST = ['coinbase', 'kraken', 'bitstamp', 'bybit', 'coingecko'] as const;
const WILD = ['gemini', 'binance', 'okx'] as const;

describe('nine venues, three ten times off and one hanging', () => {
  let hostile: PaidApp;
  let honest: PaidApp;

  beforeAll(async () => {
    hostile = await startPaidApp({
      markets: {
        scale: Object.fromEntries(WILD.map((id) => [id, 10])),
        faults: { kucoin: { kind: 'hang' } },
      },
      // long enough for a loaded CI machine to answer the wild venues, short for the hang
      env: { MARKET_TIMEOUT_MS: '2000' },
    });
    honest = await startPaidApp({ markets: { venues: HONEST } });
  });

  afterAll(async () => {
    await hostile.close();
    await honest.close();
  });

  it('serves, for every asset the honest venues outnumber the wild ones on, what the policy gives for the honest five alone', async () => {
    const served = await allPrices(hostile);
    const honestOnly = await allPrices(honest);
    // an asset quoted by as many wild venues as honest ones (BNB) has no majority: not served
    const venues = pricingVenuesBySymbol(recordedQuotes());
    const count = (symbol: string, ids: readonly string[]) =>
      ids.filter((id) => venues.get(symbol)?.has(id) === true).length;
    const expected = Object.fromEntries(
      Object.entries(honestOnly).filter(([symbol]) => count(symbol, HONEST) > count(symbol, WILD)),
    );
    expect(Object.keys(honestOnly)).toContain('BNB');
    expect(Object.keys(expected)).not.toContain('BNB');
    expect(Object.keys(served).sort()).toEqual(Object.keys(expected).sort());
    expect(Object.keys(served).length).toBeGreaterThanOrEqual(50);
    for (const [symbol, price] of Object.entries(expected))
      expectRelativelyClose(served[symbol]!, price);
  });

  it('prices every catalogue asset from at least two sources when all venues are honest', async () => {
    const all = await startPaidApp();
    try {
      const prices = await allPrices(all);
      expect(Object.keys(prices).sort()).toEqual([...DEFAULT_CATALOGUE].sort());
      const { sources } = await sourcesOf(all);
      for (const symbol of DEFAULT_CATALOGUE) {
        const contributors = sources.filter((source) => source.contributedTo.includes(symbol));
        expect(contributors.length).toBeGreaterThanOrEqual(2);
      }
    } finally {
      await all.close();
    }
  });

  it('explains in /v1/sources why each venue was or was not used', async () => {
    const { sources, rates } = await sourcesOf(hostile);
    const byId = Object.fromEntries(sources.map((source) => [source.id, source]));
    expect(Object.keys(byId).sort()).toEqual([
      'binance',
      'bitstamp',
      'bybit',
      'coinbase',
      'coingecko',
      'gemini',
      'kraken',
      'kucoin',
      'okx',
    ]);
    expect(byId.kucoin).toMatchObject({
      status: 'failing',
      consecutiveFailures: 1,
      lastError: { kind: 'timeout' },
    });
    expect(byId.kucoin?.contributedTo).toEqual([]);
    for (const id of ['gemini', 'binance', 'okx']) {
      expect(byId[id]).toMatchObject({ status: 'ok', contributedTo: [] });
      expect(byId[id]?.rejectedFor).toEqual(expect.arrayContaining(['BTC', 'ETH']));
    }
    for (const id of HONEST) {
      expect(byId[id]).toMatchObject({ status: 'ok', lastError: null, rejectedFor: [] });
      expect(byId[id]?.contributedTo).toEqual(expect.arrayContaining(['BTC', 'ETH']));
      expect(byId[id]?.instruments).toBeGreaterThan(0);
    }
    expect(rates.USDT).toBeCloseTo(1.0003, 3);
    expect(rates.USDC).toBeCloseTo(0.9999, 3);
  });
});

describe('/v1/sources from start-up on, with every venue failing', () => {
  const VENUES = ['coinbase', 'kraken', 'bitstamp'] as const;
  let markets: FakeMarkets;
  let app: RunningApp;

  beforeAll(async () => {
    markets = await FakeMarkets.start({
      venues: VENUES,
      faults: {
        coinbase: { kind: 'raw', status: 503, body: 'maintenance' },
        kraken: { kind: 'hang' },
        bitstamp: { kind: 'raw', status: 429, body: 'slow down', headers: { 'retry-after': '60' } },
      },
    });
    // no refresh() here: only the pollers' own first attempts, none of which succeeds
    app = await startApp({ ...markets.env(), MARKET_TIMEOUT_MS: '2000' });
  });

  afterAll(async () => {
    await app.close();
    await markets.close();
  });

  it('answers 200 at once, every venue listed, never reached ones waiting without an error', async () => {
    const body = await sourcesOf(app);
    expect(body.sources.map((source) => source.id).sort()).toEqual([...VENUES].sort());
    expect(body).toMatchObject({
      aggregatedAt: null,
      poller: { thisInstance: true },
      notice: null,
      rates: { USDT: null, USDC: null },
    });
    expect(body.poller.instance).not.toBeNull();
    for (const source of body.sources) {
      if (source.status === 'waiting') expect(source.lastError).toBeNull();
      else expect(source.lastError).not.toBeNull();
    }
  });

  it('names the error of each venue once its first attempt has failed, no price made yet', async () => {
    let body = await sourcesOf(app);
    for (
      let attempt = 0;
      attempt < 100 && body.sources.some((source) => source.lastError === null);
      attempt += 1
    ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      body = await sourcesOf(app);
    }
    const byId = Object.fromEntries(body.sources.map((source) => [source.id, source]));
    expect(byId.coinbase).toMatchObject({
      status: 'failing',
      consecutiveFailures: 1,
      lastError: { kind: 'http_status' },
    });
    expect(byId.coinbase?.lastError?.message).toContain('503');
    expect(byId.kraken).toMatchObject({ status: 'failing', lastError: { kind: 'timeout' } });
    expect(byId.bitstamp).toMatchObject({
      status: 'rate_limited',
      lastError: { kind: 'rate_limited' },
    });
    for (const source of body.sources) expect(source.nextPollAt).not.toBeNull();
    expect(body.aggregatedAt).toBeNull();
    expect(Date.parse(body.timestamp)).toBeGreaterThan(Date.now() - 5000);
  });
});

describe('a hostile or broken venue never reaches a served price', () => {
  type Product = { product_id: string; price: string; base_currency_id: string };
  let stack: PaidApp | undefined;

  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  /** Coinbase serving its recording with the BTC-USD product edited. */
  function coinbaseWithBtc(edit: (products: Product[], btc: Product) => void): VenueBehaviour {
    return {
      kind: 'json',
      body: () => {
        const body = fixtureCopy<{ products: Product[] }>('coinbase');
        const btc = body.products.find((product) => product.product_id === 'BTC-USD')!;
        edit(body.products, btc);
        return body;
      },
    };
  }

  async function btcFromTheOthers(fault: VenueBehaviour, extraEnv: Record<string, string> = {}) {
    stack = await startPaidApp({
      markets: { venues: ['coinbase', 'kraken', 'bitstamp'], faults: { coinbase: fault } },
      env: { MARKET_TIMEOUT_MS: '2000', ...extraEnv },
    });
    const response = await stack.buyer.fetchV2(`${stack.service.url}/v1/ticker/BTC`);
    expect(response.status).toBe(200);
    const served = ((await response.json()) as { price: { BTC: number } }).price.BTC;
    const { kraken, bitstamp } = recordedUsdPrices('BTC');
    expectServedPrice(served, (kraken + bitstamp) / 2);
    const coinbase = (await sourcesOf(stack)).sources.find((source) => source.id === 'coinbase')!;
    expect(coinbase.contributedTo).not.toContain('BTC');
    return coinbase;
  }

  it.each(['0', '-91250', 'NaN', 'Infinity', '9.1e4', '91,250', '', 'ninety thousand', ' 91250'])(
    'a BTC price of %j is ignored, the rest of the venue still used',
    async (bad) => {
      const coinbase = await btcFromTheOthers(
        coinbaseWithBtc((_products, btc) => {
          btc.price = bad;
        }),
      );
      expect(coinbase.status).toBe('ok');
      expect(coinbase.contributedTo).toContain('ETH');
    },
  );

  it('a null price is ignored', async () => {
    const coinbase = await btcFromTheOthers(
      coinbaseWithBtc((_products, btc) => {
        (btc as unknown as { price: null }).price = null;
      }),
    );
    expect(coinbase.status).toBe('ok');
  });

  it('a duplicated instrument at another price votes once and is dropped as an outlier', async () => {
    const coinbase = await btcFromTheOthers(
      coinbaseWithBtc((products, btc) => {
        products.push({ ...btc, price: String(Number(btc.price) * 10) });
      }),
    );
    expect(coinbase.rejectedFor).toContain('BTC');
  });

  it.each<[string, VenueBehaviour, string]>([
    ['an empty list', { kind: 'json', body: () => ({ products: [] }) }, 'ok'],
    [
      'a body of the wrong shape',
      { kind: 'json', body: () => ({ data: 'maintenance' }) },
      'failing',
    ],
    [
      'an HTML error page',
      { kind: 'raw', status: 503, body: '<html>down</html>', contentType: 'text/html' },
      'failing',
    ],
    [
      'HTML with status 200',
      { kind: 'raw', status: 200, body: '<!doctype html><p>hi</p>', contentType: 'text/html' },
      'failing',
    ],
    [
      'truncated JSON',
      {
        kind: 'raw',
        status: 200,
        body: '{"products":[{"product_id":"BTC-USD"',
        contentType: 'application/json',
      },
      'failing',
    ],
    [
      'a body over the size cap',
      {
        kind: 'raw',
        status: 200,
        body: `{"products":[${' '.repeat(17 * 1024 * 1024)}]}`,
        contentType: 'application/json',
      },
      'failing',
    ],
    ['a hang', { kind: 'hang' }, 'failing'],
    [
      'a hang mid-body',
      { kind: 'hang-mid-body', prefix: '{"products":[{"product_id":"BTC-USD","price":"1",' },
      'failing',
    ],
    [
      'a 429 with Retry-After',
      { kind: 'raw', status: 429, body: 'slow down', headers: { 'retry-after': '120' } },
      'rate_limited',
    ],
    ['a 418 ban', { kind: 'raw', status: 418, body: 'banned' }, 'rate_limited'],
    ['a 403', { kind: 'raw', status: 403, body: 'forbidden' }, 'rate_limited'],
  ])('%s: the refresh goes on without it', async (_case, fault, status) => {
    const coinbase = await btcFromTheOthers(fault);
    expect(coinbase.status).toBe(status);
    expect(coinbase.contributedTo).toEqual([]);
  });

  it('backs off after a rate limit for as long as Retry-After asks', async () => {
    stack = await startPaidApp({
      markets: {
        venues: ['coinbase', 'kraken', 'bitstamp'],
        faults: {
          coinbase: { kind: 'raw', status: 429, body: 'slow', headers: { 'retry-after': '120' } },
        },
      },
      env: { PRICE_REFRESH_MS: '250', PRICE_STALE_MS: '60000' },
    });
    const coinbase = stack.markets.venue('coinbase');
    const calls = coinbase.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 1200));
    await stack.service.refresh();
    expect(coinbase.requests.length).toBe(calls);
    const state = (await sourcesOf(stack)).sources.find((source) => source.id === 'coinbase')!;
    expect(state).toMatchObject({ status: 'rate_limited', lastError: { kind: 'rate_limited' } });
  });
});

describe('venue request pacing', () => {
  it('asks no venue more often than its minimum interval', async () => {
    const stack = await startPaidApp({ env: { PRICE_REFRESH_MS: '250' } });
    try {
      const counts = (): Record<string, number> =>
        Object.fromEntries(
          [...stack.markets.venues].map(([id, venue]) => [id, venue.requests.length]),
        );
      const before = counts();
      await new Promise((resolve) => setTimeout(resolve, 2100));
      const after = counts();
      // coingecko (60 s) is not asked again; the 1 s venues at most three more times in 2.1 s.
      expect(after.coingecko).toBe(before.coingecko);
      for (const id of ['coinbase', 'bitstamp'])
        expect(after[id]! - before[id]!).toBeLessThanOrEqual(3);
    } finally {
      await stack.close();
    }
  });
});
