import { BinanceSource } from './binance.source.js';
import { BitstampSource } from './bitstamp.source.js';
import { BybitSource } from './bybit.source.js';
import { CoinbaseSource } from './coinbase.source.js';
import { CoingeckoSource } from './coingecko.source.js';
import { GeminiSource } from './gemini.source.js';
import { KrakenSource } from './kraken.source.js';
import { KucoinSource } from './kucoin.source.js';
import { OkxSource } from './okx.source.js';
import { BINANCE_STREAM } from './binance.stream.js';
import { BYBIT_STREAM } from './bybit.stream.js';
import { COINBASE_STREAM } from './coinbase.stream.js';
import { KRAKEN_STREAM } from './kraken.stream.js';
import { OKX_STREAM } from './okx.stream.js';
import type { PriceSource } from './price-source.js';
import type { StreamProtocol } from './price-stream.js';
import type { VenueConnection } from './venue-connection.js';

/** A built-in venue: its id, its real scheme + host, how often it may be asked, and its source. */
export interface VenueDefinition {
  readonly id: string;
  readonly defaultBaseUrl: string;
  /** Shortest time between two snapshots from this venue, within its public rate limit with margin. */
  readonly minIntervalMs: number;
  /** Request header carrying the operator's API key for this venue, when one is configured. */
  readonly apiKeyHeader?: string;
  /** The venue's WebSocket ticker stream, when it has one: its real scheme + host, its protocol. */
  readonly stream?: { readonly defaultUrl: string; readonly protocol: StreamProtocol };
  create(connection: VenueConnection): PriceSource;
}

/** Registration of every built-in venue; adding a venue is one line here. */
export const BUILT_IN_VENUES: readonly VenueDefinition[] = [
  {
    id: 'coinbase',
    defaultBaseUrl: 'https://api.coinbase.com',
    minIntervalMs: 1000,
    stream: { defaultUrl: 'wss://advanced-trade-ws.coinbase.com', protocol: COINBASE_STREAM },
    create: (c) => new CoinbaseSource(c),
  },
  {
    id: 'kraken',
    defaultBaseUrl: 'https://api.kraken.com',
    minIntervalMs: 2000,
    stream: { defaultUrl: 'wss://ws.kraken.com', protocol: KRAKEN_STREAM },
    create: (c) => new KrakenSource(c),
  },
  {
    id: 'bitstamp',
    defaultBaseUrl: 'https://www.bitstamp.net',
    minIntervalMs: 1000,
    create: (c) => new BitstampSource(c),
  },
  {
    id: 'gemini',
    defaultBaseUrl: 'https://api.gemini.com',
    // public limit 120 req/min, and Gemini asks for at most 1 req/s: half the limit
    minIntervalMs: 1000,
    create: (c) => new GeminiSource(c),
  },
  {
    id: 'binance',
    defaultBaseUrl: 'https://api.binance.com',
    // all symbols cost weight 4 of 6000/min per IP: 240/min is 4 %, far from a 429 or 418 ban
    minIntervalMs: 1000,
    stream: { defaultUrl: 'wss://stream.binance.com:9443', protocol: BINANCE_STREAM },
    create: (c) => new BinanceSource(c),
  },
  {
    id: 'okx',
    defaultBaseUrl: 'https://www.okx.com',
    // tickers allow 20 req/2 s per IP: 1 req/s is a twentieth of that
    minIntervalMs: 1000,
    stream: { defaultUrl: 'wss://ws.okx.com:8443', protocol: OKX_STREAM },
    create: (c) => new OkxSource(c),
  },
  {
    id: 'bybit',
    defaultBaseUrl: 'https://api.bybit.com',
    // 600 req/5 s per IP, but going over earns a 403 ban of 10+ minutes: 1 req/s stays far below
    minIntervalMs: 1000,
    stream: { defaultUrl: 'wss://stream.bybit.com', protocol: BYBIT_STREAM },
    create: (c) => new BybitSource(c),
  },
  {
    id: 'kucoin',
    defaultBaseUrl: 'https://api.kucoin.com',
    // the all-tickers snapshot is rebuilt every 2 s upstream: asking more often only repeats it
    minIntervalMs: 2000,
    create: (c) => new KucoinSource(c),
  },
  {
    id: 'coingecko',
    defaultBaseUrl: 'https://api.coingecko.com',
    // keyless callers get a few calls a minute and prices are cached ~60 s upstream anyway
    minIntervalMs: 60_000,
    apiKeyHeader: 'x-cg-demo-api-key',
    create: (c) => new CoingeckoSource(c),
  },
];

export const BUILT_IN_VENUE_IDS: readonly string[] = BUILT_IN_VENUES.map((venue) => venue.id);

/** Venues with a ticker stream (MARKET_STREAMS picks among them). */
export const STREAMING_VENUE_IDS: readonly string[] = BUILT_IN_VENUES.filter(
  (venue) => venue.stream !== undefined,
).map((venue) => venue.id);
