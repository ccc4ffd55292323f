import { aggregate, type PricingPolicy } from '../src/aggregation/aggregate.js';
import { SNAPSHOT_STORE, type SnapshotStore } from '../src/aggregation/snapshot-store.js';
import { loadConfig } from '../src/app-config.js';
import { FIXTURE_MOMENT_MS, type ReplayedVenue } from './support/fake-markets.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';
import { recordedQuotes } from './support/recorded-quotes.js';

const STALE_MS = 5000;
/** Long enough for every quote the broken venue gave before it broke to go stale. */
const WATCH_MS = STALE_MS + 2000;
const SAMPLE_EVERY_MS = 200;
const TOLERANCE = 0.001;

type Fault = 'hang' | 'slow' | 'http_500' | 'garbage';

/**
 * What the honest venues alone give, from their recorded quotes: the symbols they price with a
 * margin on freshness (quotes at most 3 s old at the recording, where the service allows 5 s; and
 * without CoinGecko, asked once a minute and stale within seconds here), and each honest median.
 */
function honestPrices(broken: ReplayedVenue): Map<string, number> {
  const policy: PricingPolicy = {
    ...loadConfig({ X402_PAY_TO: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' }).pricing,
    staleMs: 3000,
  };
  const quotes = recordedQuotes(FIXTURE_MOMENT_MS).filter(
    (quote) => quote.source !== broken && quote.source !== 'coingecko',
  );
  const prices = new Map<string, number>();
  for (const [symbol, outcome] of aggregate(quotes, policy, FIXTURE_MOMENT_MS).outcomes) {
    if (outcome.status === 'priced') prices.set(symbol, outcome.price.price);
  }
  return prices;
}

async function until(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('nine venues on their own clocks, one of them broken (PRICE_STALE_MS=5000)', () => {
  let stack: PaidApp | undefined;

  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  function breakVenue(paid: PaidApp, id: ReplayedVenue, fault: Fault): void {
    switch (fault) {
      case 'hang':
        paid.markets.break(id, { kind: 'hang' });
        return;
      case 'slow':
        // answers, but only after 3.5 s: within MARKET_TIMEOUT_MS, far beyond every other venue
        paid.markets.venue(id).delayMs = 3500;
        return;
      case 'http_500':
        paid.markets.break(id, { kind: 'raw', status: 500, body: 'internal error' });
        return;
      case 'garbage':
        paid.markets.break(id, {
          kind: 'raw',
          status: 200,
          body: '\u0000\u00ff{"result":[tru',
          contentType: 'application/json',
        });
        return;
    }
  }

  it.each<[Fault, ReplayedVenue]>([
    ['hang', 'coinbase'],
    ['slow', 'kraken'],
    ['http_500', 'binance'],
    ['garbage', 'okx'],
  ])(
    'a venue that starts to %s (%s) leaves every other symbol priced, within 0.1 %% of the honest median, and never 503',
    async (fault, broken) => {
      const expected = honestPrices(broken);
      expect(expected.size).toBeGreaterThanOrEqual(50);
      stack = await startPaidApp({
        refresh: false,
        env: {
          PRICE_REFRESH_MS: '1000',
          PRICE_STALE_MS: String(STALE_MS),
          MARKET_TIMEOUT_MS: '4000',
        },
      });
      const paid = stack;
      const store = paid.service.app.get<SnapshotStore>(SNAPSHOT_STORE);
      const symbols = [...expected.keys()];
      // no explicit refresh: the venues' own timers must fill the snapshot
      await until(async () => {
        const prices = (await store.current())?.prices;
        return symbols.every((symbol) => prices?.has(symbol) === true);
      }, 5000);

      breakVenue(paid, broken, fault);
      const problems: string[] = [];
      const statuses = new Map<number, number>();
      const deadline = Date.now() + WATCH_MS;
      for (let sample = 0; Date.now() < deadline; sample += 1) {
        const snapshot = await store.current();
        const now = Date.now();
        for (const [symbol, honest] of expected) {
          const served = snapshot?.prices.get(symbol);
          if (served === undefined || now - served.observedAt > STALE_MS) {
            problems.push(`${symbol} unpriced at +${sample * SAMPLE_EVERY_MS} ms`);
          } else if (Math.abs(served.price - honest) > honest * TOLERANCE) {
            problems.push(`${symbol} ${served.price} vs honest ${honest}`);
          }
        }
        // the 503 check comes before the 402 challenge, so an unpaid request tells which it is
        const symbol = symbols[sample % symbols.length]!;
        for (const path of [`/v1/ticker/${symbol}`, '/v1/all-tickers']) {
          const { status } = await paid.service.get(path);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
        await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS));
      }
      expect(problems.slice(0, 10)).toEqual([]);
      expect([...statuses.keys()]).toEqual([402]);

      const response = await paid.buyer.fetchV2(`${paid.service.url}/v1/all-tickers`);
      expect(response.status).toBe(200);
      const { prices } = (await response.json()) as { prices: Record<string, number> };
      for (const [symbol, honest] of expected) {
        expect(Math.abs(prices[symbol]! - honest)).toBeLessThanOrEqual(honest * TOLERANCE);
      }
      const sources = (await (await paid.service.get('/v1/sources')).json()) as {
        sources: { id: string; status: string; contributedTo: string[] }[];
      };
      const venue = sources.sources.find((source) => source.id === broken)!;
      if (fault !== 'slow') {
        expect(venue.status).toBe('failing');
        expect(venue.contributedTo).toEqual([]);
      }
    },
    60_000,
  );
});
