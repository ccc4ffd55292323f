import { Inject, Injectable } from '@nestjs/common';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { MARKETS_SETTINGS, type MarketsSettings } from '../markets/markets.settings.js';
import { venueEndpoint } from '../markets/venue-connection.js';
import { VenueError } from '../markets/venue-error.js';
import { getVenueJson } from '../markets/venue-http.js';
import type { Interval, VenueCandle, VenueSeries } from './candle.js';
import { INTERVAL_MS } from './candle.js';
import type { CandleRange, CandleVenue } from './candle-venue.js';
import { VenueCallSlots, VenueCallsBusy } from './venue-call-slots.js';

/** The candle venues asked: a token so tests can hand in their own. */
export const CANDLE_VENUE_LIST = Symbol('CandleVenueList');

/** What the venues answered for one range: the series of those that answered, who failed. */
export interface VenueAnswers {
  readonly series: readonly VenueSeries[];
  /** Venues asked whose calls failed (time-out, HTTP error, unreadable body). */
  readonly failed: readonly string[];
  /**
   * Those of `failed` that may answer later: time-outs, network errors, rate limits, 5xx and
   * unreadable bodies; not a venue saying it does not list the instrument (a 4xx, its own error).
   */
  readonly unreachable: readonly string[];
  /** Venues asked: the enabled ones that serve the interval. */
  readonly asked: readonly string[];
}

/** How many calls one request may make to one venue; at 500 candles none needs more. */
export const MAX_CALLS_PER_VENUE = 2;

/**
 * Asks every enabled venue that serves an interval for its candles of a range, in parallel,
 * each at its configured base URL (MARKET_<ID>_URL). Every call starts at once and has
 * MARKET_TIMEOUT_MS for its whole exchange, so that is the request's venue time: a venue that
 * hangs past it is counted failed and the others are answered without it. Every call takes one
 * of the instance's VenueCallSlots (HISTORY_VENUE_CALLS): a round whose calls cannot all start
 * within one MARKET_TIMEOUT_MS is a 503 with Retry-After, so however many requests arrive at
 * once, the venues see at most that many calls in flight.
 */
@Injectable()
export class VenueCandles {
  private readonly endpoints: ReadonlyMap<string, ReturnType<typeof venueEndpoint>>;
  private readonly venues: readonly CandleVenue[];
  /** Venue calls made since start: what the candle keeping saves is counted here. */
  calls = 0;

  constructor(
    @Inject(MARKETS_SETTINGS.token) private readonly markets: MarketsSettings,
    @Inject(CANDLE_VENUE_LIST) venues: readonly CandleVenue[],
    private readonly slots: VenueCallSlots,
  ) {
    this.venues = venues.filter((venue) => markets.enabled.includes(venue.id));
    this.endpoints = new Map(
      this.venues.map((venue) => [
        venue.id,
        venueEndpoint(markets.baseUrls[venue.id] ?? venue.defaultBaseUrl),
      ]),
    );
  }

  /** Venues that serve `interval`. */
  serving(interval: Interval): CandleVenue[] {
    return this.venues.filter((venue) => venue.intervals[interval] !== undefined);
  }

  /** Calls one request for `count` candles makes to `venue`. */
  static callsFor(venue: CandleVenue, count: number): number {
    return venue.recentOnly === true ? 1 : Math.ceil(count / venue.perCall);
  }

  async fetch(
    symbol: string,
    interval: Interval,
    range: { readonly from: number; readonly to: number },
    client = '',
  ): Promise<VenueAnswers> {
    const venues = this.serving(interval);
    const settled = await Promise.allSettled(
      venues.map((venue) => this.fetchVenue(venue, symbol, interval, range, client)),
    );
    if (settled.some((outcome) => isBusy(outcome))) {
      throw new ApiError(
        ErrorCode.PriceUnavailable,
        `The venues are busy with other history requests (at most ${String(this.slots.limit)} calls at once); retry.`,
        { 'retry-after': String(Math.max(1, Math.ceil(this.slots.waitMs / 1000))) },
      );
    }
    const series: VenueSeries[] = [];
    const failed: string[] = [];
    const unreachable: string[] = [];
    for (const [index, outcome] of settled.entries()) {
      const venue = venues[index] as CandleVenue;
      if (outcome.status === 'fulfilled') {
        series.push(outcome.value);
      } else {
        failed.push(venue.id);
        if (!refusesInstrument(outcome.reason)) unreachable.push(venue.id);
      }
    }
    return { series, failed, unreachable, asked: venues.map((venue) => venue.id) };
  }

  private async fetchVenue(
    venue: CandleVenue,
    symbol: string,
    interval: Interval,
    { from, to }: { readonly from: number; readonly to: number },
    client: string,
  ): Promise<VenueSeries> {
    const name = venue.intervals[interval] as string;
    const { name: instrument, quote } = venue.instrument(symbol);
    const stepMs = INTERVAL_MS[interval];
    const count = (to - from) / stepMs + 1;
    const calls = VenueCandles.callsFor(venue, count);
    if (calls > MAX_CALLS_PER_VENUE) throw new Error(`${venue.id}: ${calls} calls for one range`);
    const ranges: CandleRange[] = [];
    for (let call = 0; call < calls; call++) {
      const chunkFrom = from + call * venue.perCall * stepMs;
      const chunkTo = Math.min(to, chunkFrom + (venue.perCall - 1) * stepMs);
      ranges.push({
        from: chunkFrom,
        to: chunkTo,
        count: (chunkTo - chunkFrom) / stepMs + 1,
        stepMs,
      });
    }
    const endpoint = this.endpoints.get(venue.id);
    if (endpoint === undefined) throw new Error(`${venue.id} has no endpoint`);
    const bodies = await Promise.all(
      ranges.map((range) =>
        this.slots.run(() => {
          this.calls += 1;
          return getVenueJson(`${endpoint.baseUrl}${venue.path(instrument, name, range)}`, {
            timeoutMs: this.markets.timeoutMs,
            headers: endpoint.headers,
          });
        }, client),
      ),
    );
    const candles: VenueCandle[] = bodies.flatMap((body) => venue.parse(body));
    return { venue: venue.id, quote, candles };
  }
}

function isBusy(outcome: PromiseSettledResult<unknown>): boolean {
  return outcome.status === 'rejected' && outcome.reason instanceof VenueCallsBusy;
}

/** How the venues say an instrument or its range does not exist (Kraken, OKX, Bybit, KuCoin, ...). */
const UNLISTED = /unknown|invalid|not exist|does not exist|not found|not supported|no such/i;

/**
 * A venue's definite answer that it has nothing for the request (an unlisted instrument): its own
 * error in the body naming the instrument, or a 400 / 404. Asking again would get the same. A
 * rate limit or a fault said in a 200 body (Kraken's `EGeneral:Too many requests`) or a ban (403,
 * 418) is no answer: the venue counts as unreachable, so the round's candles are not kept.
 */
export function refusesInstrument(error: unknown): boolean {
  if (!(error instanceof VenueError)) return false;
  if (error.kind === 'venue_error') return UNLISTED.test(error.message);
  return error.kind === 'http_status' && /^HTTP 40[04]\b/.test(error.message);
}
