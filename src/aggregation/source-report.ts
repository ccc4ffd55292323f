import type { RoundReport } from './price-refresh.service.js';
import type { StreamStatus } from '../markets/venue-stream.js';
import type { VenueState } from './venue-poller.js';

/** One venue as /v1/sources explains it. */
export interface SourceReport {
  readonly id: string;
  readonly status: VenueState['status'];
  readonly lastAttemptAt: string | null;
  readonly lastSuccessAt: string | null;
  readonly latencyMs: number | null;
  readonly consecutiveFailures: number;
  readonly lastError: {
    readonly kind: string;
    readonly message: string;
    readonly at: string;
  } | null;
  readonly nextPollAt: string;
  /** Instruments in the venue's last good snapshot. */
  readonly instruments: number;
  /** Of those, quotes left out because their stablecoin had no USD rate. */
  readonly unconverted: number;
  /** Served symbols whose price this venue's quote helped make in the last round. */
  readonly contributedTo: string[];
  /** Served symbols for which its quote was dropped as an outlier in the last round. */
  readonly rejectedFor: string[];
  /** How its quotes arrive right now, and its ticker stream when it has one. */
  readonly transport: VenueState['transport'];
  readonly stream: StreamReport | null;
}

export interface StreamReport {
  readonly state: string;
  readonly connections: number;
  readonly lastMessageAt: string | null;
  readonly lastError: { readonly message: string; readonly at: string } | null;
}

/** The venues' states and their part in the last round, limited to the symbols served. */
export function describeSources(report: RoundReport, served: readonly string[]): SourceReport[] {
  return report.venues.map((venue) => {
    const contributedTo: string[] = [];
    const rejectedFor: string[] = [];
    for (const symbol of served) {
      const outcome = report.result.outcomes.get(symbol);
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
      nextPollAt: iso(venue.nextPollAt),
      instruments: venue.instruments,
      unconverted: report.result.unconverted.get(venue.id) ?? 0,
      contributedTo,
      rejectedFor,
      transport: venue.transport,
      stream: describeStream(venue.stream),
    };
  });
}

function describeStream(stream: StreamStatus | undefined): StreamReport | null {
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
