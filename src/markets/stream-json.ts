import { VenueError } from './venue-error.js';

/** A stream message as JSON; text that is not JSON is an unreadable message. */
export function parseStreamJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new VenueError('invalid_body', `stream message is not JSON (${text.slice(0, 40)})`);
  }
}

/** An ISO 8601 time (Coinbase's nanosecond ones included) as epoch milliseconds. */
export function parseIsoTime(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const parsed = Date.parse(value.replace(/(\.\d{3})\d+/, '$1'));
  return Number.isNaN(parsed) ? undefined : parsed;
}
