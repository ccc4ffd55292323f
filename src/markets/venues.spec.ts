import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../test/support/project-root.js';
import { readVenueTable, venueTableCells } from '../../scripts/venue-table.js';
import { venueRequests } from './venue-definition.js';
import { BUILT_IN_VENUE_IDS, BUILT_IN_VENUES, STREAMING_VENUE_IDS } from './venues.js';

describe('BUILT_IN_VENUES', () => {
  it('gives each venue its own id, usable in MARKET_<ID>_URL', () => {
    expect(new Set(BUILT_IN_VENUE_IDS).size).toBe(BUILT_IN_VENUE_IDS.length);
    for (const id of BUILT_IN_VENUE_IDS) expect(id).toMatch(/^[a-z][a-z0-9]*$/);
  });

  it('lists the venues with a stream among them, in the same order', () => {
    const streaming = BUILT_IN_VENUES.filter((venue) => venue.stream !== undefined);
    expect(streaming.length).toBeGreaterThan(0);
    expect(STREAMING_VENUE_IDS).toEqual(streaming.map((venue) => venue.id));
  });

  it.each(BUILT_IN_VENUES.map((venue) => [venue.id, venue] as const))(
    '%s: an https base URL without a path, absolute request paths, a positive pace',
    (_id, venue) => {
      expect(new URL(venue.defaultBaseUrl).protocol).toBe('https:');
      expect(new URL(venue.defaultBaseUrl).origin).toBe(venue.defaultBaseUrl);
      const requests = venueRequests(venue);
      expect(requests.length).toBeGreaterThan(0);
      for (const request of requests) expect(request.path).toMatch(/^\/[^/]/);
      expect(venue.minIntervalMs).toBeGreaterThanOrEqual(1000);
      if (venue.stream !== undefined) {
        expect(new URL(venue.stream.defaultUrl).protocol).toBe('wss:');
        // a path under the stream URL, or none (Coinbase)
        expect(venue.stream.protocol.path).toMatch(/^(\/|$)/);
      }
    },
  );

  it('is what README’s Venues table shows (npm run venues:readme rewrites it)', () => {
    const readme = readFileSync(path.join(projectRoot(), 'README.md'), 'utf8');
    expect(readVenueTable(readme)).toEqual(venueTableCells());
  });
});
