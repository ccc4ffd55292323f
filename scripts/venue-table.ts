/**
 * README's Venues table, derived from the venue definitions (src/markets/<id>.venue.ts), so a
 * venue's id, URL, path and pace are written once. `npm run venues:readme` rewrites it; a test
 * fails when README and definitions disagree.
 */
import { venueRequests, type VenueDefinition } from '../src/markets/venue-definition.js';
import { BUILT_IN_VENUES } from '../src/markets/venues.js';

export const VENUE_TABLE_START = '<!-- venues:start (npm run venues:readme) -->';
export const VENUE_TABLE_END = '<!-- venues:end -->';

const HEADER = ['id', 'requests (all instruments in one snapshot)', 'used', 'at most every'];

/** Query values this long (CoinGecko's id list) are shown as `…`. */
const LONGEST_SHOWN_VALUE = 40;

/** The table's cells, header first: one row per built-in venue, in MARKETS order. */
export function venueTableCells(venues: readonly VenueDefinition[] = BUILT_IN_VENUES): string[][] {
  return [
    HEADER,
    ...venues.map((venue) => [
      `\`${venue.id}\``,
      venueRequests(venue)
        .map((request) => `\`GET ${venue.defaultBaseUrl}${shownPath(request.path)}\``)
        .join(', '),
      venue.summary,
      `${venue.minIntervalMs / 1000} s`,
    ]),
  ];
}

/** The table as Markdown (unpadded; prettier aligns it). */
export function venueTable(venues: readonly VenueDefinition[] = BUILT_IN_VENUES): string {
  const [header = [], ...rows] = venueTableCells(venues);
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The cells of the table between the markers in `markdown`, header first. */
export function readVenueTable(markdown: string): string[][] {
  const start = markdown.indexOf(VENUE_TABLE_START);
  const end = markdown.indexOf(VENUE_TABLE_END);
  if (start < 0 || end < start) throw new Error('no venue table markers');
  return markdown
    .slice(start + VENUE_TABLE_START.length, end)
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('|') && !/^\|[\s|:-]+\|$/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
}

/** `markdown` with the table between the markers replaced. */
export function withVenueTable(markdown: string, table: string = venueTable()): string {
  const start = markdown.indexOf(VENUE_TABLE_START);
  const end = markdown.indexOf(VENUE_TABLE_END);
  if (start < 0 || end < start) throw new Error('no venue table markers');
  return `${markdown.slice(0, start + VENUE_TABLE_START.length)}\n\n${table}\n\n${markdown.slice(end)}`;
}

function shownPath(path: string): string {
  return path.replace(/=([^&]*)/g, (whole, value: string) =>
    value.length > LONGEST_SHOWN_VALUE ? '=…' : whole,
  );
}
