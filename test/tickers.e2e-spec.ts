import { DEFAULT_CATALOGUE } from '../src/assets/default-catalogue.js';
import { venueRequests } from '../src/markets/venue-definition.js';
import { builtInVenue } from '../src/markets/venues.js';
import { servedPrice } from '../src/common/price-precision.js';
import { REPLAYED_VENUES } from './support/fake-markets.js';
import { expectServedPrice, medianOf, recordedUsdPrices } from './support/expected-prices.js';
import { OpenApiContract } from './support/openapi-contract.js';
import { pricingVenuesBySymbol, recordedQuotes } from './support/recorded-quotes.js';
import { startPaidApp, type PaidApp, type PaidAppOptions } from './support/paid-app.js';

const contract = new OpenApiContract();
const PROBLEM = 'application/problem+json';
/** The venues recordedUsdPrices() reads: the expected prices are theirs alone. */
const RECORDED_VENUES = ['coinbase', 'kraken', 'bitstamp'] as const;

async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

async function expectOk(response: Response, operationId: string): Promise<Record<string, unknown>> {
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = await json(response);
  contract.assertResponse(operationId, 200, 'application/json', body);
  return body;
}

async function expectProblem(
  response: Response,
  status: number,
  code: string,
): Promise<Record<string, unknown>> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = await json(response);
  expect(body).toMatchObject({ type: 'about:blank', status, code });
  expect(typeof body.detail).toBe('string');
  return body;
}

/** Buys a path with the v2 client (the paywall itself is tested in payments.e2e-spec.ts). */
function buy(stack: PaidApp, path: string): Promise<Response> {
  return stack.buyer.fetchV2(`${stack.service.url}${path}`);
}

describe('price API over live (fake) venues', () => {
  let stack: PaidApp;
  let markets: PaidApp['markets'];
  let service: PaidApp['service'];

  beforeAll(async () => {
    stack = await startPaidApp({ markets: { venues: RECORDED_VENUES } });
    ({ markets, service } = stack);
  });

  afterAll(async () => {
    await stack.close();
  });

  it('calls each venue on the paths and queries its definition gives (README lists them)', () => {
    for (const id of RECORDED_VENUES) {
      const paths = venueRequests(builtInVenue(id)).map((request) => request.path);
      expect(markets.venue(id).requests).toEqual(expect.arrayContaining(paths));
    }
  });

  describe('GET /v1/assets (listAssets)', () => {
    it('lists the catalogue with USD quotes', async () => {
      const body = await expectOk(await service.get('/v1/assets'), 'listAssets');
      expect(Object.keys(body).sort()).toEqual(['assets', 'count']);
      expect(body.count).toBe(DEFAULT_CATALOGUE.length);
      expect(body.assets).toEqual(DEFAULT_CATALOGUE.map((symbol) => ({ symbol, quote: 'USD' })));
    });
  });

  describe('GET /v1/ticker/{symbol} (getTicker)', () => {
    it('serves the median of the venues, upper-cased, with exactly the documented fields', async () => {
      const body = await expectOk(await buy(stack, '/v1/ticker/btc'), 'getTicker');
      expect(Object.keys(body).sort()).toEqual(['currency', 'price', 'timestamp']);
      expect(body.currency).toBe('USD');
      expect(body.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      const price = body.price as Record<string, number>;
      expect(Object.keys(price)).toEqual(['BTC']);
      expectServedPrice(price.BTC!, medianOf(Object.values(recordedUsdPrices('BTC'))));
    });

    it.each(['ETH', 'sol', 'Doge', 'LTC', 'LINK', 'XRP'])(
      'prices %s as the venues median',
      async (symbol) => {
        const body = await expectOk(await buy(stack, `/v1/ticker/${symbol}`), 'getTicker');
        const upper = symbol.toUpperCase();
        expectServedPrice(
          (body.price as Record<string, number>)[upper]!,
          medianOf(Object.values(recordedUsdPrices(upper))),
        );
      },
    );

    it.each([
      ['/v1/ticker/BTC-USD', 400, 'invalid_symbol'],
      ['/v1/ticker/%20', 400, 'invalid_symbol'],
      ['/v1/ticker/ABCDEFGHIJKLMNOPQ', 400, 'invalid_symbol'],
      ['/v1/ticker/NOTACOIN', 404, 'unknown_symbol'],
      ['/v1/ticker/XMR', 404, 'unknown_symbol'],
      ['/v1/ticker/', 404, 'route_not_found'],
    ])('answers %s with %d %s', async (path, status, code) => {
      const body = await expectProblem(await service.get(path), status, code);
      if (status !== 404 || code !== 'route_not_found')
        contract.assertResponse('getTicker', status, PROBLEM, body);
    });
  });

  describe('GET /v1/tickers/{symbols} (getTickers)', () => {
    it('serves each symbol in the order asked', async () => {
      const body = await expectOk(await buy(stack, '/v1/tickers/sol,BTC,eth'), 'getTickers');
      expect(Object.keys(body).sort()).toEqual(['currency', 'prices', 'timestamp']);
      const prices = body.prices as Record<string, number>;
      expect(Object.keys(prices)).toEqual(['SOL', 'BTC', 'ETH']);
      for (const symbol of ['SOL', 'BTC', 'ETH']) {
        expectServedPrice(prices[symbol]!, medianOf(Object.values(recordedUsdPrices(symbol))));
      }
    });

    it('accepts five symbols', async () => {
      const body = await expectOk(
        await buy(stack, '/v1/tickers/BTC,ETH,SOL,XRP,ADA'),
        'getTickers',
      );
      expect(Object.keys(body.prices as object)).toHaveLength(5);
    });

    it.each([
      ['/v1/tickers/BTC', 400, 'invalid_symbol_list'],
      ['/v1/tickers/BTC,ETH,SOL,XRP,ADA,LTC', 400, 'invalid_symbol_list'],
      ['/v1/tickers/BTC,,ETH', 400, 'invalid_symbol_list'],
      ['/v1/tickers/BTC,ETH,', 400, 'invalid_symbol_list'],
      ['/v1/tickers/,', 400, 'invalid_symbol_list'],
      ['/v1/tickers/BTC,btc', 400, 'invalid_symbol_list'],
      ['/v1/tickers/BTC;ETH', 400, 'invalid_symbol'],
      ['/v1/tickers/BTC,E%24H', 400, 'invalid_symbol'],
      ['/v1/tickers/BTC,NOTACOIN', 404, 'unknown_symbol'],
    ])('answers %s with %d %s', async (path, status, code) => {
      const body = await expectProblem(await service.get(path), status, code);
      contract.assertResponse('getTickers', status, PROBLEM, body);
    });
  });

  describe('GET /v1/all-tickers (getAllTickers)', () => {
    it('prices every catalogue asset that two of these venues quote, and leaves out the rest', async () => {
      const venues = pricingVenuesBySymbol(
        recordedQuotes().filter((quote) =>
          (RECORDED_VENUES as readonly string[]).includes(quote.source),
        ),
      );
      const quorate = DEFAULT_CATALOGUE.filter((symbol) => (venues.get(symbol)?.size ?? 0) >= 2);
      expect(quorate.length).toBeGreaterThan(DEFAULT_CATALOGUE.length / 2);
      const body = await expectOk(await buy(stack, '/v1/all-tickers'), 'getAllTickers');
      expect(Object.keys(body.prices as object).sort()).toEqual([...quorate].sort());
      for (const price of Object.values(body.prices as Record<string, number>))
        expect(servedPrice(price)).toBe(price);
      expectServedPrice(
        (body.prices as Record<string, number>).BTC!,
        medianOf(Object.values(recordedUsdPrices('BTC'))),
      );
    });
  });

  describe('errors outside the routes', () => {
    it('answers an unknown route with a problem+json 404', async () => {
      await expectProblem(await service.get('/v2/ticker/BTC'), 404, 'route_not_found');
    });

    it('answers a wrong method on a known path with a problem+json 405', async () => {
      await expectProblem(
        await service.get('/v1/assets', { method: 'POST' }),
        405,
        'method_not_allowed',
      );
    });
  });

  it('keeps serving after a refresh round', async () => {
    await service.refresh();
    await expectOk(await buy(stack, '/v1/ticker/BTC'), 'getTicker');
  });

  it('answers every invalid request before asking for payment, and charges nothing', async () => {
    const before = await stack.balances();
    for (const path of [
      '/v1/ticker/BTC-USD',
      '/v1/ticker/NOTACOIN',
      '/v1/tickers/BTC',
      '/v1/tickers/BTC,btc',
    ]) {
      const plain = await service.get(path);
      expect([400, 404]).toContain(plain.status);
      expect(plain.headers.get('payment-required')).toBeNull();
      const paying = await buy(stack, path);
      expect(paying.status).toBe(plain.status);
    }
    expect(await stack.balances()).toEqual(before);
  });
});

describe('prices that cannot be trusted', () => {
  let stack: PaidApp | undefined;

  async function start(options: PaidAppOptions): Promise<PaidApp> {
    stack = await startPaidApp(options);
    return stack;
  }

  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  it('answers 503 with Retry-After while no venue has answered yet', async () => {
    // venues no longer wait for each other: only when every one of them hangs is nothing priced
    const hang = { kind: 'hang' } as const;
    const { service } = await start({
      markets: { faults: Object.fromEntries(REPLAYED_VENUES.map((id) => [id, hang])) },
      env: { PRICE_REFRESH_MS: '7000', PRICE_STALE_MS: '60000' },
      refresh: false,
    });
    for (const path of ['/v1/ticker/BTC', '/v1/tickers/BTC,ETH', '/v1/all-tickers']) {
      const response = await service.get(path);
      await expectProblem(response, 503, 'price_unavailable');
      expect(response.headers.get('retry-after')).toBe('7');
    }
    await expectProblem(await service.get('/health/ready'), 503, 'price_unavailable');
  });

  it('still checks the symbols before saying 503', async () => {
    const hang = { kind: 'hang' } as const;
    const { service } = await start({
      markets: { faults: { coinbase: hang, kraken: hang, bitstamp: hang } },
      refresh: false,
    });
    await expectProblem(await service.get('/v1/ticker/NOTACOIN'), 404, 'unknown_symbol');
    await expectProblem(await service.get('/v1/tickers/BTC'), 400, 'invalid_symbol_list');
  });

  it('ignores a single venue reporting ten times the price', async () => {
    const paid = await start({ markets: { venues: RECORDED_VENUES, scale: { kraken: 10 } } });
    const body = await expectOk(await buy(paid, '/v1/tickers/BTC,ETH'), 'getTickers');
    for (const symbol of ['BTC', 'ETH']) {
      const { coinbase, bitstamp } = recordedUsdPrices(symbol);
      expectServedPrice(
        (body.prices as Record<string, number>)[symbol]!,
        medianOf([coinbase, bitstamp]),
      );
    }
  });

  it('ignores a single venue reporting a tenth of the price', async () => {
    const paid = await start({ markets: { venues: RECORDED_VENUES, scale: { coinbase: 0.1 } } });
    const body = await expectOk(await buy(paid, '/v1/ticker/ETH'), 'getTicker');
    const { kraken, bitstamp } = recordedUsdPrices('ETH');
    expectServedPrice((body.price as Record<string, number>).ETH!, medianOf([kraken, bitstamp]));
  });

  it('gives no price when the only two venues disagree beyond the tolerance', async () => {
    const paid = await start({
      markets: { venues: ['coinbase', 'bitstamp'], scale: { bitstamp: 1.1 } },
    });
    const before = await paid.balances();
    const response = await buy(paid, '/v1/ticker/BTC');
    await expectProblem(response, 503, 'price_unavailable');
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await expectProblem(await buy(paid, '/v1/all-tickers'), 503, 'price_unavailable');
    expect(await paid.balances()).toEqual(before);
  });

  it.each([
    ['is down', { kind: 'raw', status: 500, body: 'Internal Server Error' }],
    [
      'sends an HTML page',
      { kind: 'raw', status: 200, body: '<html>maintenance</html>', contentType: 'text/html' },
    ],
    [
      'rate-limits',
      { kind: 'raw', status: 429, body: 'slow down', headers: { 'retry-after': '30' } },
    ],
    ['hangs', { kind: 'hang' }],
    ['hangs mid-body', { kind: 'hang-mid-body', prefix: '{"products":[' }],
    ['resets the connection', { kind: 'reset' }],
  ] as const)('serves from the remaining venues when one %s', async (_name, fault) => {
    const paid = await start({
      markets: { venues: RECORDED_VENUES, faults: { coinbase: fault } },
      env: { MARKET_TIMEOUT_MS: '300' },
    });
    const body = await expectOk(await buy(paid, '/v1/ticker/BTC'), 'getTicker');
    const { kraken, bitstamp } = recordedUsdPrices('BTC');
    expectServedPrice((body.price as Record<string, number>).BTC!, medianOf([kraken, bitstamp]));
  });

  it('answers 503 when too few venues are left for the quorum', async () => {
    const { service } = await start({
      markets: {
        venues: RECORDED_VENUES,
        faults: {
          coinbase: { kind: 'raw', status: 503, body: 'down' },
          kraken: {
            kind: 'raw',
            status: 200,
            body: '{"error":["EService:Unavailable"],"result":{}}',
          },
        },
      },
    });
    await expectProblem(await service.get('/v1/ticker/BTC'), 503, 'price_unavailable');
    await expectProblem(await service.get('/v1/all-tickers'), 503, 'price_unavailable');
  });

  it('keeps the last good price through a failed round, until it goes stale', async () => {
    const paid = await start({
      markets: { venues: RECORDED_VENUES },
      env: { PRICE_REFRESH_MS: '250', PRICE_STALE_MS: '1500' },
    });
    const before = await expectOk(await buy(paid, '/v1/ticker/BTC'), 'getTicker');
    for (const id of ['coinbase', 'kraken', 'bitstamp'] as const) {
      paid.markets.break(id, { kind: 'raw', status: 500, body: 'x' });
    }
    await paid.service.refresh();
    const during = await expectOk(await buy(paid, '/v1/ticker/BTC'), 'getTicker');
    expect(during.price).toEqual(before.price);
    await new Promise((resolve) => setTimeout(resolve, 1700));
    await expectProblem(await paid.service.get('/v1/ticker/BTC'), 503, 'price_unavailable');
  });

  it('answers all-tickers while at least half the catalogue is priced, leaving out the rest', async () => {
    const paid = await start({ env: { ASSETS: 'BTC,ETH,XMR,NOTLISTED' } });
    const body = await expectOk(await buy(paid, '/v1/all-tickers'), 'getAllTickers');
    expect(Object.keys(body.prices as object).sort()).toEqual(['BTC', 'ETH']);
    await expectProblem(await paid.service.get('/v1/ticker/XMR'), 503, 'price_unavailable');
  });
});
