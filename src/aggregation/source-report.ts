import type { RoundResult } from './aggregate.js';
import type { StreamStatus } from '../markets/venue-stream.js';
import type { SourceDto, SourcesDto, StablecoinRatesDto, StreamDto } from './sources.dto.js';
import { waitingState, type VenueState } from './venue-poller.js';

/**
 * The venues' report as the polling instance makes it: /v1/sources without what depends on the
 * instance answering. With several instances it is what the poller publishes for the others.
 */
export type SourceReport = Omit<SourcesDto, 'poller' | 'notice' | 'payments'> & {
  /** The instance that polls the venues; null when none has reported yet. */
  readonly instance: string | null;
};

/** Where the polling instance publishes its report and the other instances read it. */
export interface SourceReportStore {
  current(): Promise<SourceReport | undefined>;
  publish(report: SourceReport): Promise<void>;
}

/** While it polls, an instance sharing REDIS_URL publishes its report this often. */
export const SOURCE_REPORT_EVERY_MS = 1000;
/** A published report lives this long: a poller that stopped leaves none behind for longer. */
export const SOURCE_REPORT_TTL_MS = 10_000;

/** Null without REDIS_URL: the one instance always polls and answers from its own state. */
export const SOURCE_REPORT_STORE = Symbol('SourceReportStore');

/** The last aggregation, as the report explains the venues' part in it. */
export interface AggregationRecord {
  readonly asOf: number;
  readonly result: RoundResult;
}

/** The report of `instance` at `now`: every venue's state and its part in the last aggregation. */
export function buildSourceReport(
  instance: string | null,
  now: number,
  venues: readonly VenueState[],
  aggregation: AggregationRecord | undefined,
  served: readonly string[],
): SourceReport {
  const rates = aggregation?.result.rates;
  return {
    instance,
    timestamp: iso(now),
    aggregatedAt: aggregation === undefined ? null : iso(aggregation.asOf),
    rates: { USDT: rates?.USDT ?? null, USDC: rates?.USDC ?? null } satisfies StablecoinRatesDto,
    sources: describeSources(venues, aggregation?.result, served),
  };
}

/** The report of an instance that does not poll while no poller has published one. */
export function noReport(now: number, venueIds: readonly string[]): SourceReport {
  return buildSourceReport(null, now, venueIds.map(waitingState), undefined, []);
}

/** The venues' states and their part in the last aggregation, limited to the symbols served. */
export function describeSources(
  venues: readonly VenueState[],
  result: RoundResult | undefined,
  served: readonly string[],
): SourceDto[] {
  return venues.map((venue) => {
    const contributedTo: string[] = [];
    const rejectedFor: string[] = [];
    for (const symbol of served) {
      const outcome = result?.outcomes.get(symbol);
      if (outcome?.status !== 'priced') continue;
      if (outcome.price.sources.includes(venue.id)) contributedTo.push(symbol);
      if (outcome.rejected.includes(venue.id)) rejectedFor.push(symbol);
    }
    return {
      id: venue.id,
      status: venue.status,
      lastAttemptAt: isoOrNull(venue.lastAttemptAt),
      lastSuccessAt: isoOrNull(venue.lastSuccessAt),
      latencyMs: venue.latencyMs ?? null,
      consecutiveFailures: venue.consecutiveFailures,
      lastError:
        venue.lastError === undefined
          ? null
          : {
              kind: venue.lastError.kind,
              message: venue.lastError.message,
              at: iso(venue.lastError.at),
            },
      // 0 until the first attempt has finished: it is being made (or, not polling, never was)
      nextPollAt: venue.nextPollAt === 0 ? null : iso(venue.nextPollAt),
      instruments: venue.instruments,
      unconverted: result?.unconverted.get(venue.id) ?? 0,
      contributedTo,
      rejectedFor,
      transport: venue.transport,
      stream: describeStream(venue.stream),
    };
  });
}

function describeStream(stream: StreamStatus | undefined): StreamDto | null {
  if (stream === undefined) return null;
  return {
    state: stream.state,
    connections: stream.connections,
    lastMessageAt: isoOrNull(stream.lastMessageAt),
    lastError:
      stream.lastError === undefined
        ? null
        : { message: stream.lastError.message, at: iso(stream.lastError.at) },
  };
}

function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

function isoOrNull(epochMs: number | undefined): string | null {
  return epochMs === undefined ? null : iso(epochMs);
}
