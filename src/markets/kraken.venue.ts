import { KRAKEN_STREAM } from './kraken.stream.js';
import type { VenueQuote } from './price-source.js';
import type { VenueConnection } from './venue-connection.js';
import type { CustomVenue, QuoteFetcher } from './venue-definition.js';
import { VenueError } from './venue-error.js';
import { expectArray, expectRecord, isRecord, parseAmount, parsePrice } from './venue-json.js';

/** The ticker (polled) and the pair names it is read with. */
const KRAKEN_PATHS = { ticker: '/0/public/Ticker', assetpairs: '/0/public/AssetPairs' } as const;

/** Kraken's legacy asset codes that differ from everyone else's. */
const KRAKEN_ASSET_ALIASES: Readonly<Record<string, string>> = { XBT: 'BTC', XDG: 'DOGE' };
/** Pair names change rarely; re-read them hourly. */
const PAIRS_TTL_MS = 60 * 60 * 1000;

export interface KrakenPair {
  readonly base: string;
  readonly quote: string;
}

/** Kraken: two calls and a cache of pair names, so its own fetcher rather than a JSON venue. */
export const KRAKEN: CustomVenue = {
  id: 'kraken',
  summary: 'USD pairs; `XBT` → `BTC`, `XDG` → `DOGE`; pair names from AssetPairs, re-read hourly',
  defaultBaseUrl: 'https://api.kraken.com',
  paths: KRAKEN_PATHS,
  minIntervalMs: 2000,
  stream: { defaultUrl: 'wss://ws.kraken.com', protocol: KRAKEN_STREAM },
  create: (connection) => new KrakenSource(connection),
};

/**
 * Kraken's all-pairs ticker. Its pair keys (`XXBTZUSD`, `SOLUSD`) are resolved through
 * AssetPairs, read once and cached, rather than guessed from the key's letters.
 */
export class KrakenSource implements QuoteFetcher {
  private pairs:
    { readonly byKey: ReadonlyMap<string, KrakenPair>; readonly at: number } | undefined;

  constructor(private readonly venue: VenueConnection) {}

  async fetchQuotes(): Promise<VenueQuote[]> {
    const pairs = await this.assetPairs();
    const body = await this.venue.getJson(KRAKEN_PATHS.ticker);
    return parseKrakenTicker(body, pairs, this.venue.now());
  }

  private async assetPairs(): Promise<ReadonlyMap<string, KrakenPair>> {
    const now = this.venue.now();
    if (this.pairs !== undefined && now - this.pairs.at < PAIRS_TTL_MS) return this.pairs.byKey;
    const byKey = parseKrakenAssetPairs(await this.venue.getJson(KRAKEN_PATHS.assetpairs));
    this.pairs = { byKey, at: now };
    return byKey;
  }
}

export function parseKrakenAssetPairs(body: unknown): Map<string, KrakenPair> {
  const pairs = new Map<string, KrakenPair>();
  for (const [key, pair] of Object.entries(krakenResult(body))) {
    if (!isRecord(pair) || typeof pair.wsname !== 'string') continue;
    const [base, quote] = pair.wsname.split('/');
    if (base === undefined || base === '' || quote === undefined || quote === '') continue;
    pairs.set(key, { base: krakenAsset(base), quote: krakenAsset(quote) });
  }
  return pairs;
}

export function parseKrakenTicker(
  body: unknown,
  pairs: ReadonlyMap<string, KrakenPair>,
  receivedAt: number,
): VenueQuote[] {
  const quotes: VenueQuote[] = [];
  for (const [key, ticker] of Object.entries(krakenResult(body))) {
    const pair = pairs.get(key);
    if (pair?.quote !== 'USD' || !isRecord(ticker)) continue;
    const last: unknown = Array.isArray(ticker.c) ? ticker.c[0] : undefined;
    const price = parsePrice(last);
    if (price === undefined) continue;
    const volume = Array.isArray(ticker.v) ? parseAmount(ticker.v[1]) : undefined;
    quotes.push({
      symbol: pair.base,
      quote: 'USD',
      price,
      volume,
      observedAt: receivedAt,
    });
  }
  return quotes;
}

/** Kraken answers errors with HTTP 200 and a non-empty `error` array. */
function krakenResult(body: unknown): Record<string, unknown> {
  const envelope = expectRecord(body, 'body');
  const errors = expectArray(envelope.error ?? [], 'error');
  if (errors.length > 0)
    throw new VenueError('venue_error', `Kraken error: ${errors.map(String).join('; ')}`);
  return expectRecord(envelope.result, 'result');
}

function krakenAsset(code: string): string {
  const upper = code.toUpperCase();
  return KRAKEN_ASSET_ALIASES[upper] ?? upper;
}
