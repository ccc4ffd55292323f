import { Inject, Injectable } from '@nestjs/common';
import { PRICING_SETTINGS, type PricingSettings } from '../aggregation/pricing.settings.js';
import { ApiError, ErrorCode } from '../common/api-error.js';
import { aggregateCandles } from './candle-aggregation.js';
import { INTERVAL_MS, type Candle, type Interval } from './candle.js';
import { CANDLE_STORE, type CandleStore, type KeptCandle } from './candle-store.js';
import { VenueCandles } from './venue-candles.js';

/** A symbol's candles of one interval over aligned starts `from`..`to`, inclusive. */
export interface CandleQuery {
  readonly symbol: string;
  readonly interval: Interval;
  readonly from: number;
  readonly to: number;
}

/** The candles of a range that exist, sorted; a start no venue has is absent. */
export interface CandleSet {
  readonly candles: readonly Candle[];
  /** Venues whose calls failed for this answer (those candles were made without them). */
  readonly failed: readonly string[];
}

/** An answer with an open candle is reused this long: the 402 and the paid request share it. */
export const RECENT_ANSWER_MS = 5_000;
/** A candle is kept once it has been closed this long: venues may still amend one just closed. */
export const KEEP_AFTER_CLOSE_MS = 60_000;

/**
 * The candles of a range: the closed ones kept (they never change) are read from the store, the
 * rest asked of the venues once (concurrent identical requests share one round of calls, and an
 * answer is reused for a few seconds so an unpaid 402 and its paid retry cost one round), then
 * aggregated. Closed candles are kept only from a round in which every venue answered (or said
 * it does not list the instrument), so a candle made while a venue was down is served but not
 * frozen.
 */
@Injectable()
export class HistoryCandles {
  private readonly recent = new Map<string, Promise<CandleSet>>();

  constructor(
    private readonly venues: VenueCandles,
    @Inject(CANDLE_STORE) private readonly store: CandleStore,
    @Inject(PRICING_SETTINGS.token) private readonly pricing: PricingSettings,
  ) {}

  /**
   * `client`: who asks (its address), so venue calls are shared out between clients in turn
   * (VenueCallSlots); identical requests share the first asker's round.
   */
  candles(query: CandleQuery, now: number = Date.now(), client = ''): Promise<CandleSet> {
    const key = `${query.symbol}:${query.interval}:${query.from}:${query.to}`;
    const known = this.recent.get(key);
    if (known !== undefined) return known;
    const answer = this.resolve(query, now, client);
    this.recent.set(key, answer);
    const forget = (): void => {
      this.recent.delete(key);
    };
    answer.then(() => setTimeout(forget, RECENT_ANSWER_MS).unref(), forget);
    return answer;
  }

  private async resolve(query: CandleQuery, now: number, client: string): Promise<CandleSet> {
    const step = INTERVAL_MS[query.interval];
    const starts: number[] = [];
    for (let start = query.from; start <= query.to; start += step) starts.push(start);
    const settled = starts.filter((start) => start + step + KEEP_AFTER_CLOSE_MS <= now);
    const kept = await this.store.get(query.symbol, query.interval, settled);
    const missing = starts.filter((start) => !kept.has(start));
    if (missing.length === 0) return { candles: present(starts, kept), failed: [] };

    const range = { from: missing[0] as number, to: missing[missing.length - 1] as number };
    const answers = await this.venues.fetch(query.symbol, query.interval, range, client);
    if (answers.series.length === 0 && answers.unreachable.length > 0) {
      throw new ApiError(
        ErrorCode.PriceUnavailable,
        `No venue answered for ${query.symbol} ${query.interval} candles (unreachable: ${answers.unreachable.join(', ')}).`,
        { 'retry-after': '5' },
      );
    }
    const fresh = aggregateCandles(answers.series, query.interval, range, now, this.pricing);
    const byStart = new Map(fresh.map((candle) => [Date.parse(candle.time), candle]));
    if (answers.unreachable.length === 0 && answers.series.length > 0) {
      const keep = new Map<number, KeptCandle>();
      for (const start of missing) {
        if (start + step + KEEP_AFTER_CLOSE_MS <= now) keep.set(start, byStart.get(start) ?? null);
      }
      await this.store.put(query.symbol, query.interval, keep);
    }
    const all = new Map<number, KeptCandle>(kept);
    for (const start of missing) all.set(start, byStart.get(start) ?? null);
    return { candles: present(starts, all), failed: answers.failed };
  }
}

function present(starts: readonly number[], kept: ReadonlyMap<number, KeptCandle>): Candle[] {
  return starts.flatMap((start) => {
    const candle = kept.get(start);
    return candle === undefined || candle === null ? [] : [candle];
  });
}
