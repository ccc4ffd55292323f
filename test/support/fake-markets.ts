import { statsVenue } from '../../src/market-stats/stats-venues.js';
import { venueRequests, type VenueRequest } from '../../src/markets/venue-definition.js';
import { BUILT_IN_VENUE_IDS, builtInVenue } from '../../src/markets/venues.js';
import { replayCandles } from './fake-candles.js';
import { FakeVenue, type VenueBehaviour } from './fake-venue.js';
import { loadFixture } from './fixtures.js';
import { isStablecoinInstrument, type PriceWalk } from './price-walk.js';

/** The moment the recorded fixtures were captured (see test/fixtures/markets/README.md). */
export const FIXTURE_MOMENT_MS = Date.parse('2026-11-20T12:00:00Z');

type Json = Record<string, unknown>;
/** The factor for an instrument, by the venue's name for it (`BTC-USD`, `XXBTZUSD`, `tether`). */
type FactorOf = (instrument: string) => number;

/**
 * What a replay must know of a venue's body beyond its definition: where its timestamps and
 * prices sit. Both optional: a venue without its own times is replayed as recorded, and only a
 * venue with `scale` can be played as wildly wrong.
 */
interface VenueAdjustment {
  /** Moves the recorded venue timestamps forward so the replay looks live. */
  readonly freshen?: (body: unknown, shiftMs: number) => void;
  /** Multiplies each price in a response by its instrument's factor (a move, a wrong venue). */
  readonly scale?: (body: unknown, factorOf: FactorOf) => void;
}

const scaleDecimal = (value: unknown, factor: number): string => String(Number(value) * factor);
const shiftDecimal = (value: unknown, shift: number): string => String(Number(value) + shift);

/** By venue id; each venue's paths and fixtures come from its definition (venueRequests). */
export const VENUE_ADJUSTMENTS: Readonly<Record<string, VenueAdjustment>> = {
  coinbase: {
    scale: (body, factor) => {
      for (const product of (body as { products: Json[] }).products) {
        product.price = scaleDecimal(product.price, factor(String(product.product_id)));
      }
    },
  },
  kraken: {
    scale: (body, factor) => {
      const result = (body as { result?: Record<string, { c?: string[] }> }).result ?? {};
      for (const [pair, ticker] of Object.entries(result)) {
        if (Array.isArray(ticker.c)) ticker.c[0] = scaleDecimal(ticker.c[0], factor(pair));
      }
    },
  },
  bitstamp: {
    freshen: (body, shiftMs) => {
      for (const row of body as Json[]) {
        row.timestamp = String(Math.floor(Number(row.timestamp) + shiftMs / 1000));
      }
    },
    scale: (body, factor) => {
      for (const row of body as Json[]) row.last = scaleDecimal(row.last, factor(String(row.pair)));
    },
  },
  gemini: {
    scale: (body, factor) => {
      for (const row of body as Json[])
        row.price = scaleDecimal(row.price, factor(String(row.pair)));
    },
  },
  binance: {
    // the 24 h statistics carry their window's ends; the price feed has no time
    freshen: (body, shiftMs) => {
      for (const row of body as Json[]) {
        if (typeof row.closeTime === 'number') row.closeTime += shiftMs;
        if (typeof row.openTime === 'number') row.openTime += shiftMs;
      }
    },
    scale: (body, factor) => {
      for (const row of body as Json[]) {
        row.price = scaleDecimal(row.price, factor(String(row.symbol)));
      }
    },
  },
  okx: {
    freshen: (body, shiftMs) => {
      for (const ticker of (body as { data: Json[] }).data) {
        ticker.ts = shiftDecimal(ticker.ts, shiftMs);
      }
    },
    scale: (body, factor) => {
      for (const ticker of (body as { data: Json[] }).data) {
        ticker.last = scaleDecimal(ticker.last, factor(String(ticker.instId)));
      }
    },
  },
  bybit: {
    freshen: (body, shiftMs) => {
      (body as { time: number }).time += shiftMs;
    },
    scale: (body, factor) => {
      for (const ticker of (body as { result: { list: Json[] } }).result.list) {
        ticker.lastPrice = scaleDecimal(ticker.lastPrice, factor(String(ticker.symbol)));
      }
    },
  },
  kucoin: {
    freshen: (body, shiftMs) => {
      (body as { data: { time: number } }).data.time += shiftMs;
    },
    scale: (body, factor) => {
      for (const ticker of (body as { data: { ticker: Json[] } }).data.ticker) {
        ticker.last = scaleDecimal(ticker.last, factor(String(ticker.symbol)));
      }
    },
  },
  coingecko: {
    freshen: (body, shiftMs) => {
      for (const coin of Object.values(body as Record<string, { last_updated_at: number }>)) {
        coin.last_updated_at += Math.floor(shiftMs / 1000);
      }
    },
    scale: (body, factor) => {
      for (const [id, coin] of Object.entries(body as Record<string, { usd: number }>)) {
        coin.usd *= factor(id);
      }
    },
  },
};

/** A built-in venue id. */
export type ReplayedVenue = string;
/** Every built-in venue, each replayed from its recorded responses. */
export const REPLAYED_VENUES: readonly ReplayedVenue[] = BUILT_IN_VENUE_IDS;

export interface FakeMarketsOptions {
  /** Venues to start; every replayable venue by default. */
  readonly venues?: readonly ReplayedVenue[];
  /** Per venue, a price factor (10 = every price ten times too high). */
  readonly scale?: Partial<Record<ReplayedVenue, number>>;
  /** Per venue, a misbehaviour on every path from the start. */
  readonly faults?: Partial<Record<ReplayedVenue, VenueBehaviour>>;
  /** Every venue's prices (stablecoins' aside) follow this walk; none by default. */
  readonly walk?: PriceWalk;
}

/**
 * Every venue as a real HTTP server on loopback, replaying its recorded responses with
 * timestamps moved to the present. Individual paths can be re-pointed at misbehaviours.
 */
export class FakeMarkets {
  private constructor(
    readonly venues: ReadonlyMap<ReplayedVenue, FakeVenue>,
    private readonly factors: Map<ReplayedVenue, number>,
    /** The walk every price follows, if the markets move. */
    readonly walk: PriceWalk | undefined,
  ) {}

  static async start(options: FakeMarketsOptions = {}): Promise<FakeMarkets> {
    const venues = new Map<ReplayedVenue, FakeVenue>();
    const factors = new Map<ReplayedVenue, number>();
    for (const id of options.venues ?? REPLAYED_VENUES) {
      const factor = options.scale?.[id];
      if (factor !== undefined) factors.set(id, scalable(id, factor));
      const behaviours: Record<string, VenueBehaviour> = {};
      for (const request of replayedRequests(id)) {
        behaviours[request.path] = {
          kind: 'json',
          body: () => replayBody(id, request, factors.get(id), options.walk),
        };
      }
      const venue = await FakeVenue.start(behaviours);
      replayCandles(id, venue);
      venues.set(id, venue);
    }
    const markets = new FakeMarkets(venues, factors, options.walk);
    for (const [id, fault] of Object.entries(options.faults ?? {})) {
      if (fault !== undefined) markets.break(id, fault);
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
    this.factors.set(id, scalable(id, factor));
  }

  /** Makes every path of a venue misbehave the same way. */
  break(id: ReplayedVenue, behaviour: VenueBehaviour): void {
    for (const { path } of replayedRequests(id)) this.venue(id).on(path, behaviour);
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

/** A venue's price requests, then those of its 24-hour statistics that are not the same. */
function replayedRequests(id: ReplayedVenue): VenueRequest[] {
  const prices = venueRequests(builtInVenue(id));
  const stats = (statsVenue(id)?.requests ?? []).filter(
    (request) => !prices.some((price) => price.path === request.path),
  );
  return [...prices, ...stats];
}

/** The factor, if this venue's prices can be scaled (its replay says where they sit). */
function scalable(id: ReplayedVenue, factor: number): number {
  if (VENUE_ADJUSTMENTS[id]?.scale === undefined) {
    throw new Error(`venue ${id} has no scale in VENUE_ADJUSTMENTS`);
  }
  return factor;
}

/**
 * The recorded response, its times moved to now. Only the snapshot (the venue's first request)
 * carries prices to scale; Kraken's pair names, for one, do not.
 */
function replayBody(
  id: ReplayedVenue,
  request: VenueRequest,
  factor: number | undefined,
  walk: PriceWalk | undefined,
): unknown {
  const body = loadFixture(request.fixture);
  const adjustment = VENUE_ADJUSTMENTS[id];
  adjustment?.freshen?.(body, Date.now() - FIXTURE_MOMENT_MS);
  const snapshot = venueRequests(builtInVenue(id))[0]?.path === request.path;
  if ((factor !== undefined || walk !== undefined) && snapshot) {
    adjustment?.scale?.(body, (instrument) => (factor ?? 1) * movedBy(walk, instrument));
  }
  return body;
}

/** The walk's factor for an instrument: 1 without a walk, and for stablecoins. */
export function movedBy(walk: PriceWalk | undefined, instrument: string): number {
  return walk === undefined || isStablecoinInstrument(instrument) ? 1 : walk.factor;
}
