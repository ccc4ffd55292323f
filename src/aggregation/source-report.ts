import type { RoundReport } from './price-refresh.service.js';
import type { StreamStatus } from '../markets/venue-stream.js';
import type { SourceDto, StreamDto } from './sources.dto.js';

/** The venues' states and their part in the last round, limited to the symbols served. */
export function describeSources(report: RoundReport, served: readonly string[]): SourceDto[] {
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
