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

/** Longest venue error text kept: enough to diagnose, too short to flood a log or a response. */
export const MAX_VENUE_ERROR_LENGTH = 200;

export class VenueError extends Error {
  constructor(
    readonly kind: VenueErrorKind,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(printableVenueText(message));
    this.name = 'VenueError';
  }
}

/**
 * Venue text as it may be logged and served: no control characters or escape sequences (they
 * would forge log lines or colour a terminal), no URL credentials, one line, capped in length.
 */
export function printableVenueText(text: string): string {
  const printable = text
    // ANSI escape sequences first, then any other control character
    // eslint-disable-next-line no-control-regex
    .replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, '')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/\/\/[^\s/@]*@/g, '//')
    .replace(/ {2,}/g, ' ')
    .trim();
  return printable.length <= MAX_VENUE_ERROR_LENGTH
    ? printable
    : `${printable.slice(0, MAX_VENUE_ERROR_LENGTH - 1)}…`;
}

/** An error a venue reports inside an HTTP 200 body, with its own code and message. */
export function venueReportedError(venue: string, code: unknown, message: unknown): VenueError {
  const shownCode =
    typeof code === 'string' || typeof code === 'number' ? String(code) : 'without a code';
  const detail = typeof message === 'string' && message !== '' ? `: ${message}` : '';
  return new VenueError('venue_error', `${venue} error ${shownCode}${detail}`);
}
