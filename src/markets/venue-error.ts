/** Why a venue call failed, as recorded in source health and logs. */
export type VenueErrorKind =
  | 'timeout'
  | 'network'
  | 'http_status'
  | 'rate_limited'
  | 'too_large'
  | 'invalid_body'
  | 'venue_error';

export class VenueError extends Error {
  constructor(
    readonly kind: VenueErrorKind,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'VenueError';
  }
}
