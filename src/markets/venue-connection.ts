import { getVenueJson } from './venue-http.js';

/**
 * Where and how a source reaches its venue: the base URL (scheme + host), the time-out, and any
 * headers the venue wants on every request (an API key).
 */
export class VenueConnection {
  constructor(
    readonly baseUrl: string,
    readonly timeoutMs: number,
    readonly now: () => number = Date.now,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}

  /** GETs the venue's own path and query under the configured base URL. */
  getJson(pathAndQuery: string): Promise<unknown> {
    return getVenueJson(`${this.baseUrl}${pathAndQuery}`, {
      timeoutMs: this.timeoutMs,
      headers: this.headers,
    });
  }
}
