import { remoteText } from '../common/remote-text.js';

/** Why a venue call failed, as recorded in source health and logs (and listed in the OpenAPI). */
export const VENUE_ERROR_KINDS = [
  'timeout',
  'network',
  'http_status',
  'rate_limited',
  'too_large',
  'invalid_body',
  'venue_error',
] as const;

export type VenueErrorKind = (typeof VENUE_ERROR_KINDS)[number];

export class VenueError extends Error {
  constructor(
    readonly kind: VenueErrorKind,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    // venue text: logged and served in /v1/sources
    super(remoteText(message));
    this.name = 'VenueError';
  }
}

/** An error a venue reports inside an HTTP 200 body, with its own code and message. */
export function venueReportedError(venue: string, code: unknown, message: unknown): VenueError {
  const shownCode =
    typeof code === 'string' || typeof code === 'number' ? String(code) : 'without a code';
  const detail = typeof message === 'string' && message !== '' ? `: ${message}` : '';
  return new VenueError('venue_error', `${venue} error ${shownCode}${detail}`);
}
