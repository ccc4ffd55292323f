/**
 * Live or recorded prices for the sandbox: one short request to each venue's real endpoint
 * decides. Probing is separate from deciding so tests can use loopback servers only.
 */
import { venueRequests } from '../src/markets/venue-definition.js';
import { BUILT_IN_VENUES } from '../src/markets/venues.js';

/** Venue id → did its endpoint answer 2xx within the time-out. */
export type Reachability = Readonly<Record<string, boolean>>;

export type VenueChoice =
  | { readonly mode: 'live'; readonly markets: readonly string[]; readonly reason: string }
  | { readonly mode: 'recorded'; readonly reason: string };

export const PROBE_TIMEOUT_MS = 2_000;

/** Venue id → the real URL the service would poll (no MARKET_<ID>_URL override). */
export function liveVenueEndpoints(): Record<string, string> {
  const endpoints: Record<string, string> = {};
  for (const venue of BUILT_IN_VENUES) {
    endpoints[venue.id] = `${venue.defaultBaseUrl}${venueRequests(venue)[0]?.path ?? '/'}`;
  }
  return endpoints;
}

/** One GET per URL, all in parallel, each bounded by `timeoutMs`; only a 2xx counts. */
export async function probeVenues(
  endpoints: Readonly<Record<string, string>>,
  timeoutMs: number = PROBE_TIMEOUT_MS,
): Promise<Reachability> {
  const ids = Object.keys(endpoints);
  const answers = await Promise.all(ids.map((id) => answers2xx(endpoints[id] ?? '', timeoutMs)));
  return Object.fromEntries(ids.map((id, index) => [id, answers[index] === true]));
}

async function answers2xx(url: string, timeoutMs: number): Promise<boolean> {
  try {
    const response = await fetch(url, {
      signal: AbortSignal.timeout(timeoutMs),
      headers: { accept: 'application/json' },
    });
    // the headers are the answer; the (large) body is not needed
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * Live only when enough venues answer to reach the pricing quorum (PRICE_MIN_SOURCES), using
 * just those; otherwise every live request would end in 503, so recorded data is served instead.
 */
export function chooseVenues(reachability: Reachability, quorum: number): VenueChoice {
  const reachable = Object.keys(reachability).filter((id) => reachability[id] === true);
  const unreachable = Object.keys(reachability).filter((id) => reachability[id] !== true);
  if (reachable.length > 0 && reachable.length >= quorum) {
    const missing = unreachable.length === 0 ? '' : `; not answering: ${unreachable.join(', ')}`;
    return {
      mode: 'live',
      markets: reachable,
      reason: `live venues: ${reachable.join(', ')}${missing}`,
    };
  }
  const reason =
    reachable.length === 0
      ? `no market venue answered (${unreachable.join(', ')})`
      : `only ${reachable.join(', ')} answered; ${quorum} venues are needed for a price`;
  return { mode: 'recorded', reason };
}
