import { VenueError } from './venue-error.js';

export interface VenueRequestOptions {
  readonly timeoutMs: number;
  /** Responses larger than this are refused; a venue snapshot is a few MB at most. */
  readonly maxBytes?: number;
  /** Extra request headers, such as a venue's API key. */
  readonly headers?: Readonly<Record<string, string>>;
}

const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;
/** HTTP statuses that mean "slow down" (403 and 418 are Bybit's and Binance's bans), venue or RPC. */
export const RATE_LIMIT_STATUSES: ReadonlySet<number> = new Set([403, 418, 429]);

/**
 * GETs a venue URL and parses its JSON body. The time-out covers the whole exchange, body
 * included, so a venue that stalls mid-body fails like one that never answers.
 */
export async function getVenueJson(url: string, options: VenueRequestOptions): Promise<unknown> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  try {
    const headers = { ...options.headers, accept: 'application/json' };
    // A redirect would carry the API-key header to another host; venues do not redirect these calls.
    const response = await fetch(url, { signal, headers, redirect: 'error' });
    if (!response.ok) {
      await response.body?.cancel();
      throw statusError(response);
    }
    const text = await readCapped(response, options.maxBytes ?? DEFAULT_MAX_BYTES);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new VenueError('invalid_body', `response is not JSON (${describeStart(text)})`);
    }
  } catch (error) {
    throw asVenueError(error, options.timeoutMs);
  }
}

async function readCapped(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    throw new VenueError('too_large', `response of ${declared} bytes exceeds ${maxBytes}`);
  }
  if (response.body === null) return '';
  const reader = response.body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    size += read.value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new VenueError('too_large', `response exceeds ${maxBytes} bytes`);
    }
    chunks.push(read.value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function statusError(response: Response): VenueError {
  if (RATE_LIMIT_STATUSES.has(response.status)) {
    return new VenueError(
      'rate_limited',
      `HTTP ${response.status}`,
      retryAfterMs(response.headers.get('retry-after')),
    );
  }
  return new VenueError('http_status', `HTTP ${response.status}`);
}

/** A Retry-After header (seconds or an HTTP date) in milliseconds from now. */
export function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function asVenueError(error: unknown, timeoutMs: number): VenueError {
  if (error instanceof VenueError) return error;
  if (
    error instanceof DOMException &&
    (error.name === 'TimeoutError' || error.name === 'AbortError')
  ) {
    return new VenueError('timeout', `no complete response within ${timeoutMs} ms`);
  }
  const cause =
    error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  const message = error instanceof Error ? error.message : String(error);
  return new VenueError('network', `${message}${cause}`);
}

function describeStart(text: string): string {
  const start = text.slice(0, 40).replace(/\s+/g, ' ').trim();
  return start === '' ? 'empty body' : `starts with "${start}"`;
}
