import type { VenueQuote } from './price-source.js';
import type { StreamProtocol } from './price-stream.js';
import type { VenueConnection } from './venue-connection.js';

/** What every built-in venue declares: its id, its real scheme + host, its pace, its stream. */
interface VenueBasics {
  /** Written here only: MARKETS, MARKET_<ID>_URL, each quote's `source` and the test replays use it. */
  readonly id: string;
  /** What README's Venues table says it reads: the instruments kept, how they are dated (Markdown). */
  readonly summary: string;
  readonly defaultBaseUrl: string;
  /** Shortest time between two snapshots from this venue, within its public rate limit with margin. */
  readonly minIntervalMs: number;
  /** Request header carrying the operator's API key for this venue, when one is configured. */
  readonly apiKeyHeader?: string;
  /** The venue's WebSocket ticker stream, when it has one: its real scheme + host, its protocol. */
  readonly stream?: { readonly defaultUrl: string; readonly protocol: StreamProtocol };
}

/**
 * A venue that answers every instrument in one JSON GET: a path and a pure parser are all it
 * needs; the generic JsonVenueSource does the rest. Its recorded response is `<id>.json`.
 */
export interface JsonVenue extends VenueBasics {
  /** Path and query under the base URL. */
  readonly path: string;
  /**
   * Maps the venue's names to ours and keeps USD, USDT and USDC quotes, skipping what it cannot
   * read; throws a VenueError only when the whole body is wrong or reports an error.
   */
  parse(body: unknown, receivedAt: number): VenueQuote[];
}

/**
 * A venue that needs more than one call or keeps state between calls (Kraken's pair names):
 * its own fetcher class. Its recorded responses are `<id>-<name>.json`, one per named path.
 */
export interface CustomVenue extends VenueBasics {
  /** Every path it requests, by name. */
  readonly paths: Readonly<Record<string, string>>;
  create(connection: VenueConnection): QuoteFetcher;
}

export type VenueDefinition = JsonVenue | CustomVenue;

/** Reads a venue's quotes; the venue's id is added by the PriceSource around it. */
export interface QuoteFetcher {
  fetchQuotes(): Promise<VenueQuote[]>;
}

/** One request a venue makes, and the recorded response (test/fixtures/markets) that replays it. */
export interface VenueRequest {
  readonly path: string;
  readonly fixture: string;
}

/** Every request path of a venue with its fixture name, first the one polled for its snapshot. */
export function venueRequests(venue: VenueDefinition): VenueRequest[] {
  if ('path' in venue) return [{ path: venue.path, fixture: venue.id }];
  return Object.entries(venue.paths).map(([name, path]) => ({
    path,
    fixture: `${venue.id}-${name}`,
  }));
}

/** The generic source: one GET of the venue's path, read by its parser. */
export class JsonVenueSource implements QuoteFetcher {
  constructor(
    private readonly venue: JsonVenue,
    private readonly connection: VenueConnection,
  ) {}

  async fetchQuotes(): Promise<VenueQuote[]> {
    const body = await this.connection.getJson(this.venue.path);
    return this.venue.parse(body, this.connection.now());
  }
}

/** The fetcher for a venue: the generic one for a JSON venue, its own class otherwise. */
export function quoteFetcher(venue: VenueDefinition, connection: VenueConnection): QuoteFetcher {
  return 'path' in venue ? new JsonVenueSource(venue, connection) : venue.create(connection);
}
