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

/** A configured base URL split into the URL requests go to and the headers its userinfo means. */
export interface VenueEndpoint {
  readonly baseUrl: string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * `MARKET_<ID>_URL` may carry `user:pass@` for a proxy or a private venue mirror. Those
 * credentials travel as HTTP Basic authorization, never as part of a URL that could reach an
 * error message, a log line or `/v1/sources`.
 */
export function venueEndpoint(configured: string): VenueEndpoint {
  const url = new URL(configured);
  if (url.username === '' && url.password === '') return { baseUrl: configured, headers: {} };
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = '';
  url.password = '';
  return {
    baseUrl: url.toString().replace(/\/+$/, ''),
    headers: { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` },
  };
}
