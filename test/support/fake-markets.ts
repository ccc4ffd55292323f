import { coingeckoPricePath } from '../../src/markets/coingecko.source.js';
import { FakeVenue, type VenueBehaviour } from './fake-venue.js';
import { loadFixture } from './fixtures.js';

/** The moment the recorded fixtures were captured (see test/fixtures/markets/README.md). */
export const FIXTURE_MOMENT_MS = Date.parse('2026-11-20T12:00:00Z');

type Json = Record<string, unknown>;

/** How each built-in venue is replayed: its real paths, its fixtures, and where its prices sit. */
interface VenueReplay {
  readonly paths: Readonly<Record<string, string>>;
  /** Moves the recorded venue timestamps forward so the replay looks live. */
  readonly freshen: (body: unknown, shiftMs: number) => void;
  /** Multiplies every price in a response, to play a venue that is wildly wrong. */
  readonly scale: (body: unknown, factor: number) => void;
}

const scaleDecimal = (value: unknown, factor: number): string => String(Number(value) * factor);
const shiftDecimal = (value: unknown, shift: number): string => String(Number(value) + shift);

export const VENUE_REPLAYS = {
  coinbase: {
    paths: { '/api/v3/brokerage/market/products': 'coinbase' },
    freshen: () => undefined,
    scale: (body, factor) => {
      for (const product of (body as { products: Json[] }).products) {
        product.price = scaleDecimal(product.price, factor);
      }
    },
  },
  kraken: {
    paths: { '/0/public/Ticker': 'kraken-ticker', '/0/public/AssetPairs': 'kraken-assetpairs' },
    freshen: () => undefined,
    scale: (body, factor) => {
      const result = (body as { result?: Record<string, { c?: string[] }> }).result ?? {};
      for (const ticker of Object.values(result)) {
        if (Array.isArray(ticker.c)) ticker.c[0] = scaleDecimal(ticker.c[0], factor);
      }
    },
  },
  bitstamp: {
    paths: { '/api/v2/ticker/': 'bitstamp' },
    freshen: (body, shiftMs) => {
      for (const row of body as Json[]) {
        row.timestamp = String(Math.floor(Number(row.timestamp) + shiftMs / 1000));
      }
    },
    scale: (body, factor) => {
      for (const row of body as Json[]) row.last = scaleDecimal(row.last, factor);
    },
  },
  gemini: {
    paths: { '/v1/pricefeed': 'gemini' },
    freshen: () => undefined,
    scale: (body, factor) => {
      for (const row of body as Json[]) row.price = scaleDecimal(row.price, factor);
    },
  },
  binance: {
    paths: { '/api/v3/ticker/price': 'binance' },
    freshen: () => undefined,
    scale: (body, factor) => {
      for (const row of body as Json[]) row.price = scaleDecimal(row.price, factor);
    },
  },
  okx: {
    paths: { '/api/v5/market/tickers?instType=SPOT': 'okx' },
    freshen: (body, shiftMs) => {
      for (const ticker of (body as { data: Json[] }).data) {
        ticker.ts = shiftDecimal(ticker.ts, shiftMs);
      }
    },
    scale: (body, factor) => {
      for (const ticker of (body as { data: Json[] }).data) {
        ticker.last = scaleDecimal(ticker.last, factor);
      }
    },
  },
  bybit: {
    paths: { '/v5/market/tickers?category=spot': 'bybit' },
    freshen: (body, shiftMs) => {
      (body as { time: number }).time += shiftMs;
    },
    scale: (body, factor) => {
      for (const ticker of (body as { result: { list: Json[] } }).result.list) {
        ticker.lastPrice = scaleDecimal(ticker.lastPrice, factor);
      }
    },
  },
  kucoin: {
    paths: { '/api/v1/market/allTickers': 'kucoin' },
    freshen: (body, shiftMs) => {
      (body as { data: { time: number } }).data.time += shiftMs;
    },
    scale: (body, factor) => {
      for (const ticker of (body as { data: { ticker: Json[] } }).data.ticker) {
        ticker.last = scaleDecimal(ticker.last, factor);
      }
    },
  },
  coingecko: {
    paths: { [coingeckoPricePath()]: 'coingecko' },
    freshen: (body, shiftMs) => {
      for (const coin of Object.values(body as Record<string, { last_updated_at: number }>)) {
        coin.last_updated_at += Math.floor(shiftMs / 1000);
      }
    },
    scale: (body, factor) => {
      for (const coin of Object.values(body as Record<string, { usd: number }>)) {
        coin.usd *= factor;
      }
    },
  },
} satisfies Record<string, VenueReplay>;

export type ReplayedVenue = keyof typeof VENUE_REPLAYS;
export const REPLAYED_VENUES = Object.keys(VENUE_REPLAYS) as ReplayedVenue[];

export interface FakeMarketsOptions {
  /** Venues to start; every replayable venue by default. */
  readonly venues?: readonly ReplayedVenue[];
  /** Per venue, a price factor (10 = every price ten times too high). */
  readonly scale?: Partial<Record<ReplayedVenue, number>>;
  /** Per venue, a misbehaviour on every path from the start. */
  readonly faults?: Partial<Record<ReplayedVenue, VenueBehaviour>>;
}

/**
 * Every venue as a real HTTP server on loopback, replaying its recorded responses with
 * timestamps moved to the present. Individual paths can be re-pointed at misbehaviours.
 */
export class FakeMarkets {
  private constructor(
    readonly venues: ReadonlyMap<ReplayedVenue, FakeVenue>,
    private readonly factors: Map<ReplayedVenue, number>,
  ) {}

  static async start(options: FakeMarketsOptions = {}): Promise<FakeMarkets> {
    const venues = new Map<ReplayedVenue, FakeVenue>();
    const factors = new Map<ReplayedVenue, number>();
    for (const id of options.venues ?? REPLAYED_VENUES) {
      const replay: VenueReplay = VENUE_REPLAYS[id];
      const factor = options.scale?.[id];
      if (factor !== undefined) factors.set(id, factor);
      const behaviours: Record<string, VenueBehaviour> = {};
      for (const [path, fixture] of Object.entries(replay.paths)) {
        behaviours[path] = {
          kind: 'json',
          body: () => replayBody(replay, fixture, factors.get(id)),
        };
      }
      venues.set(id, await FakeVenue.start(behaviours));
    }
    const markets = new FakeMarkets(venues, factors);
    for (const [id, fault] of Object.entries(options.faults ?? {})) {
      markets.break(id as ReplayedVenue, fault);
    }
    return markets;
  }

  venue(id: ReplayedVenue): FakeVenue {
    const venue = this.venues.get(id);
    if (venue === undefined) throw new Error(`venue ${id} was not started`);
    return venue;
  }

  /** From now on, every price this venue answers is multiplied by `factor` (a market move). */
  scale(id: ReplayedVenue, factor: number): void {
    this.factors.set(id, factor);
  }

  /** Makes every path of a venue misbehave the same way. */
  break(id: ReplayedVenue, behaviour: VenueBehaviour): void {
    for (const path of Object.keys(VENUE_REPLAYS[id].paths)) this.venue(id).on(path, behaviour);
  }

  /** MARKETS and MARKET_<ID>_URL pointing the service at these venues, streams off. */
  env(): Record<string, string> {
    // streams stay off unless a test starts fake streams (test/support/fake-streams.ts)
    const env: Record<string, string> = {
      MARKETS: [...this.venues.keys()].join(','),
      MARKET_STREAMS: 'none',
    };
    for (const [id, venue] of this.venues) env[`MARKET_${id.toUpperCase()}_URL`] = venue.url;
    return env;
  }

  async close(): Promise<void> {
    await Promise.all([...this.venues.values()].map((venue) => venue.close()));
  }
}

function replayBody(replay: VenueReplay, fixture: string, factor: number | undefined): unknown {
  const body = loadFixture(fixture);
  replay.freshen(body, Date.now() - FIXTURE_MOMENT_MS);
  if (factor !== undefined && fixture !== 'kraken-assetpairs') replay.scale(body, factor);
  return body;
}
