import { FakeMarkets, REPLAYED_VENUES, type ReplayedVenue } from '../test/support/fake-markets.js';
import { FakeStreams, STREAMING_VENUES } from '../test/support/fake-streams.js';
import { PriceWalk } from '../test/support/price-walk.js';
import type { VenueChoice } from './venue-choice.js';

type Closer = () => Promise<void> | void;

/**
 * SANDBOX_PRICE_WALK: whether `npm start` / `npm run sandbox` move the recorded prices (`on`,
 * the default) or replay them as recorded (`off`).
 */
export function priceWalkFrom(value: string | undefined): PriceWalk | undefined {
  const setting = (value ?? 'on').trim().toLowerCase();
  if (setting === 'off') return undefined;
  if (setting === 'on' || setting === '') return new PriceWalk({ seed: Date.now() });
  throw new Error(`SANDBOX_PRICE_WALK must be on or off (got "${value ?? ''}")`);
}

/**
 * The MARKETS / MARKET_<ID>_URL variables for the choice, starting fake venues if recorded.
 * With a walk, the recorded venues move with it and the streaming ones also push each move on
 * their fake ticker streams, so a price stream has updates within ~0.1 s of a move.
 */
export async function startVenues(
  choice: VenueChoice,
  closers: Closer[],
  env: Readonly<Record<string, string | undefined>>,
  walk: PriceWalk | undefined,
): Promise<{ env: Record<string, string>; markets: FakeMarkets | undefined }> {
  if (choice.mode === 'live')
    return { env: { MARKETS: choice.markets.join(',') }, markets: undefined };
  const venues = recordedVenues(env['MARKETS']);
  const markets = await FakeMarkets.start({ venues, ...(walk === undefined ? {} : { walk }) });
  closers.push(() => markets.close());
  if (walk === undefined) return { env: markets.env(), markets };
  const streams = await FakeStreams.start(
    STREAMING_VENUES.filter((id) => venues.includes(id)),
    undefined,
    walk,
  );
  closers.push(() => streams.close());
  walk.start();
  closers.push(() => {
    walk.stop();
  });
  return { env: { ...markets.env(), ...streams.env() }, markets };
}

/** The recorded venues to replay: those MARKETS names (all of them when unset). */
function recordedVenues(markets: string | undefined): readonly ReplayedVenue[] {
  if (markets === undefined || markets.trim() === '') return REPLAYED_VENUES;
  const wanted = markets.split(',').map((id) => id.trim().toLowerCase());
  return REPLAYED_VENUES.filter((id) => wanted.includes(id));
}
